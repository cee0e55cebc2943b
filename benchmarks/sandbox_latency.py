"""Sandbox start-up time and exec round-trip latency, per backend (medians of many runs).

    .venv/bin/python benchmarks/sandbox_latency.py [--starts 10] [--execs 50] [--backend docker]

A start is open_sandbox() until the sandbox can run commands, plus close(); an exec is one
`true` run to completion (including the `timeout` wrapper both backends put around it).
A backend that cannot run here (no daemon, no image) is reported as skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernelarena.logs import configure  # noqa: E402
from sandbox import SandboxConfig, SandboxError, create_sandbox, open_sandbox  # noqa: E402


async def measure(backend: str, starts: int, execs: int) -> dict[str, float]:
    cfg = SandboxConfig.model_validate({"backend": backend})  # the CLI's string, checked by pydantic here
    start_s, close_s = [], []
    for _ in range(starts):
        sb = create_sandbox(cfg)
        t0 = time.perf_counter()
        try:
            await sb.start()
            t1 = time.perf_counter()
        finally:
            await sb.close()
        start_s.append(t1 - t0)
        close_s.append(time.perf_counter() - t1)
    exec_s = []
    async with open_sandbox(cfg) as sb:
        await sb.exec(["true"])  # first exec warms caches on both sides
        for _ in range(execs):
            t0 = time.perf_counter()
            result = await sb.exec(["true"])
            exec_s.append(time.perf_counter() - t0)
            assert result.exit_code == 0, result
    return {
        "start_ms": statistics.median(start_s) * 1e3,
        "start_p90_ms": sorted(start_s)[int(0.9 * (len(start_s) - 1))] * 1e3,
        "close_ms": statistics.median(close_s) * 1e3,
        "exec_ms": statistics.median(exec_s) * 1e3,
        "exec_p90_ms": sorted(exec_s)[int(0.9 * (len(exec_s) - 1))] * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--execs", type=int, default=50)
    parser.add_argument("--backend", action="append", choices=["docker", "process"])
    args = parser.parse_args()
    configure(level="WARNING")
    rows = []
    for backend in args.backend or ["docker", "process"]:
        try:
            rows.append((backend, asyncio.run(measure(backend, args.starts, args.execs))))
        except SandboxError as exc:
            rows.append((backend, str(exc)))
    print(f"{'backend':<9} {'start ms':>9} {'p90':>7} {'close ms':>9} {'exec ms':>8} {'p90':>7}"
          f"   (median of {args.starts} starts, {args.execs} execs)")
    for backend, row in rows:
        if isinstance(row, str):
            print(f"{backend:<9} skipped: {row}")
        else:
            print(f"{backend:<9} {row['start_ms']:>9.1f} {row['start_p90_ms']:>7.1f} {row['close_ms']:>9.1f} "
                  f"{row['exec_ms']:>8.1f} {row['exec_p90_ms']:>7.1f}")


if __name__ == "__main__":
    main()
