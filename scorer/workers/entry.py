"""Entry point of a scorer child process: `python -m scorer.workers.entry --role reference|kernel`.

The judge talks to it over two dedicated pipe fds (`--in-fd`, `--out-fd`); fds 1 and 2 are a log
file the judge keeps the tail of, so nothing a kernel prints can corrupt the channel. The worker
answers one reply frame per request frame until it gets `exit` (or dies).
"""

from __future__ import annotations

# The clock is captured before anything else is imported or loaded, so later patches by a
# kernel cannot reach the callables the timer uses.
from scorer.gpu.timing import capture_clock

_CLOCK = capture_clock()

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import torch  # noqa: E402

from scorer.gpu.gate import locked_gate  # noqa: E402
from scorer.gpu.lock import device_lock_key  # noqa: E402
from scorer.workers import wall  # noqa: E402
from scorer.workers.kernel_role import KernelRole  # noqa: E402
from scorer.workers.protocol import (  # noqa: E402
    KERNEL_REQUESTS,
    REFERENCE_REQUESTS,
    Exit,
    Ping,
    ProtocolViolation,
    Request,
    Spool,
    TimedNext,
    TimedStep,
    parse_request,
    recv_frame,
    send_frame,
)
from scorer.workers.reference_role import ReferenceRole  # noqa: E402

Handler = Callable[[Any, Any], tuple[dict[str, Any], Any]]


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m scorer.workers.entry")
    parser.add_argument("--role", choices=("reference", "kernel"), required=True)
    parser.add_argument("--in-fd", type=int, required=True)
    parser.add_argument("--out-fd", type=int, required=True)
    parser.add_argument("--spool", type=Path, required=True, help="folder the payloads pass through")
    parser.add_argument("--warm-device", default="", help="cuda: make the context and the hold before any request")
    return parser.parse_args(argv)


def _asker(in_fd: int, out_fd: int, spool: Spool) -> Callable[[TimedStep], TimedNext]:
    """One message to the judge and its answer, inside the request being handled."""

    def ask(step: TimedStep) -> TimedNext:
        send_frame(out_fd, step.header())
        header = recv_frame(in_fd, spool=spool, trusted=True).header
        if header.get("op") != TimedNext.op:
            raise ProtocolViolation(f"expected {TimedNext.op!r} from the judge, got {header.get('op')!r}")
        return TimedNext.parse(header)

    return ask


def _role_handlers(role: str, ask: Callable[[TimedStep], TimedNext]) -> dict[str, Handler]:
    if role == "reference":
        ref = ReferenceRole(_CLOCK)
        return {"environment": ref.environment, "prepare": ref.prepare, "time": ref.time, "compare": ref.compare,
                "compare_timed": ref.compare_timed, "batch_setup": ref.batch_setup, "batch": ref.batch,
                "batch_collect": ref.batch_collect, "attach": ref.attach, "sample": ref.sample, "verify_batch": ref.verify_batch,
                "gate_plan": ref.gate_plan, "gate_setup": ref.gate_setup, "gate_release": ref.gate_release}
    ker = KernelRole(_CLOCK, ask)
    return {"setup": ker.setup, "load": ker.load, "release": ker.release, "correctness": ker.correctness,
            "time": ker.time,
            "batch_setup": ker.batch_setup, "batch": ker.batch, "gate_setup": ker.gate_setup,
            "gate_enqueue": ker.gate_enqueue, "gate_wait": ker.gate_wait}


def warm_device(device: str) -> None:
    """CUDA's context and the timing's GPU-wide hold, made while the worker waits in a session's
    pool instead of inside a scoring (about a second of CPU and driver work each). Nothing of a
    kernel has run yet, so what is made here is as trusted as in `setup`, which makes whatever is
    missing. The first ping is answered after this, so a session's settle stage covers it."""
    if not device.startswith("cuda"):
        return
    try:
        if not torch.cuda.is_available():
            return
        dev = torch.device(device)
        if device_lock_key(dev) is None:
            return  # without the judge's lock key a new context could land inside another's timing
        locked_gate(dev, _CLOCK.hold_kernel)  # under the lock: the hold's trial makes the context
    except Exception:  # best effort: setup and prepare make them again where this failed
        pass


def serve(role: str, in_fd: int, out_fd: int, spool_path: Path, warm: str = "") -> int:
    if role == "kernel" and wall.enabled():
        # Before the device, the task or the kernel exist in this process (CUDA must start inside).
        # Every descriptor but the channel is closed there: one opened before the wall points at
        # the host's mounts, where `..` leads past the covers.
        wall.enter(Path.cwd(), [p for p in os.environ.get(wall.READ_ONLY_ENV, "").split(os.pathsep) if p],
                   keep=(in_fd, out_fd))
    # Opened only now, through the wall's own mounts.
    spool = Spool(spool_path)
    handlers = _role_handlers(role, _asker(in_fd, out_fd, spool))
    warm_device(warm)
    # Keep the channel fds out of reach of fork/exec'd helpers the kernel might start.
    os.set_inheritable(in_fd, False)
    os.set_inheritable(out_fd, False)
    requests = REFERENCE_REQUESTS if role == "reference" else KERNEL_REQUESTS
    while True:
        frame = recv_frame(in_fd, spool=spool, trusted=True)
        reply_file = str(frame.header.get("reply_file", "reply.pt"))
        try:
            request: Request = parse_request(frame.header, requests)
        except ProtocolViolation as exc:
            send_frame(out_fd, {"ok": False, "kind": "protocol", "error": str(exc)})
            continue
        if isinstance(request, Exit):
            return 0
        if isinstance(request, Ping):
            # Answered once imports are done, so the judge can tell start-up cost from work.
            send_frame(out_fd, {"ok": True, "worker_s": 0.0})
            continue
        handler = handlers[request.op]
        started = _CLOCK.perf_counter()
        try:
            header, payload = handler(request, frame.payload)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            send_frame(out_fd, {"ok": False, "kind": "runtime_error",
                                "error": f"kernel exited the process with code {code} (sys.exit)"})
            return 0
        except BaseException as exc:  # a worker bug still answers, so the judge can report it
            send_frame(out_fd, {"ok": False, "kind": "worker_error",
                                "error": "".join(traceback.format_exception(exc))[-4000:]})
            continue
        header["worker_s"] = _CLOCK.perf_counter() - started
        send_frame(out_fd, header, payload, spool=spool, payload_name=reply_file)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    return serve(args.role, args.in_fd, args.out_fd, args.spool, args.warm_device)


if __name__ == "__main__":
    sys.exit(main())
