"""Running a coroutine from a command line so that SIGTERM, like Ctrl-C, cancels it.

asyncio.run already turns Ctrl-C into cancellation of the main task; SIGTERM (what `kill`,
`timeout` and container runtimes send) would otherwise end the process at once, skipping every
`finally` and leaking the sandboxes. Cancellation unwinds through `open_sandbox`, which closes
them.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Interrupted(Exception):
    """The run was cancelled by a signal; `exit_code` is the shell's 128 + signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.exit_code = 128 + signum


def run_cancellable(coro: Coroutine[Any, Any, T]) -> T:
    received: list[int] = []

    async def main() -> T:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        assert task is not None

        def on_term() -> None:
            received.append(signal.SIGTERM)
            task.cancel()

        loop.add_signal_handler(signal.SIGTERM, on_term)
        try:
            return await coro
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        raise Interrupted(signal.SIGINT) from None
    except asyncio.CancelledError:
        if received:
            raise Interrupted(received[0]) from None
        raise
