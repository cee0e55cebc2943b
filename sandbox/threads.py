"""Blocking work on a dedicated thread, awaited from asyncio.

Streaming a command's output can block for the command's whole run; on the shared default
executor (a handful of threads) a few long commands would stall every other sandbox call.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def run_on_thread(fn: Callable[[], T], name: str = "kernelarena-sandbox") -> asyncio.Future[T]:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def succeed(result: T) -> None:
        if not future.done():
            future.set_result(result)

    def fail(error: BaseException) -> None:
        if not future.done():
            future.set_exception(error)

    def body() -> None:
        try:
            result = fn()
        except BaseException as exc:  # handed to the awaiting task, not swallowed
            settle = functools.partial(fail, exc)
        else:
            settle = functools.partial(succeed, result)
        try:
            loop.call_soon_threadsafe(settle)
        except RuntimeError:
            pass  # the loop closed while we ran (interpreter shutdown); nobody awaits

    threading.Thread(target=body, name=name, daemon=True).start()
    return future
