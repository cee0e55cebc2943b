"""How long a scorer worker takes to answer its first request: started with exec (a new Python
that imports torch and triton) or forked from the judge process's fork server (scorer/workers/forkserver.py),
and for a kernel worker with and without its wall (scorer/workers/wall.py: the cost of the wall).

    TRITON_INTERPRET=1 .venv/bin/python benchmarks/worker_start.py --device cpu
    python benchmarks/worker_start.py      # on a GPU box: with the warm-up (CUDA context, the hold)

One worker at a time, each waited for and closed before the next; the fork server's own start (its
imports, once per judge process) is reported apart, as the first row.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scorer.workers import forkserver, wall  # noqa: E402
from scorer.workers.process import WorkerDirs, WorkerProcess  # noqa: E402


def start_once(base: Path, role: str, warm: str) -> float:
    t0 = time.perf_counter()
    worker = WorkerProcess(role, WorkerDirs.create(base, role), warm_device=warm)
    worker.start()
    try:
        if not worker.wait_started(300):
            raise SystemExit(f"worker did not start: {worker.log_tail()}")
        return time.perf_counter() - t0
    finally:
        worker.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--workers", type=int, default=6)
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args()
    if args.device == "auto":
        import torch

        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    warm = "cuda" if args.device == "cuda" else ""
    rows = []
    print(f"{'start':>12} {'role':>10} {'wall':>5} {'first s':>8} {'median s':>9} {'min s':>7} {'max s':>7}"
          f"   ({args.workers} workers)")
    with tempfile.TemporaryDirectory(prefix="kernelarena-startbench-") as tmp:
        for mode in ("exec", "fork server"):
            os.environ[forkserver.ENV_SWITCH] = "0" if mode == "exec" else "1"
            for role, walled in (("kernel", "on"), ("kernel", "off"), ("reference", "-")):
                os.environ[wall.ENV_SWITCH] = "0" if walled == "off" else "1"
                times = [start_once(Path(tmp) / f"{mode}-{role}-{walled}-{i}".replace(" ", "_"), role, warm)
                         for i in range(args.workers)]
                rest = times[1:] or times
                rows.append({"start": mode, "role": role, "wall": walled, "device": args.device, "seconds": times})
                print(f"{mode:>12} {role:>10} {walled:>5} {times[0]:>8.2f} {statistics.median(rest):>9.3f} "
                      f"{min(rest):>7.3f} {max(rest):>7.3f}")
        os.environ.pop(wall.ENV_SWITCH, None)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
