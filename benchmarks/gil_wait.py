"""How long a judge thread woken by a worker's reply waits for the GIL while other threads of the
same process run Python (scorer/judge/clock.py: the judge's clock stops in such a thread).

    python benchmarks/gil_wait.py [--busy 7] [--replies 200]

A child process writes its CLOCK_MONOTONIC time into a pipe every few milliseconds (a worker's
reply); the main thread blocks on the pipe and reads the clock as soon as it runs again. `--busy`
threads run pure Python meanwhile (the other scorings' judges). Rows: the switch interval, then
the delay from the write to the reader running, median and 90th percentile.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WRITER = """
import os, sys, time
fd, ack, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for _ in range(n):
    time.sleep(0.004)
    os.write(fd, f"{time.monotonic():.9f}".encode().rjust(24))
    os.read(ack, 1)  # the next reply only once this one was read: no backlog
"""


def delays_ms(replies: int, busy: int) -> list[float]:
    stop = threading.Event()

    def burn() -> None:
        x = 0
        while not stop.is_set():
            for i in range(1000):
                x += i * i

    burners = [threading.Thread(target=burn, daemon=True) for _ in range(busy)]
    for t in burners:
        t.start()
    read_fd, write_fd = os.pipe()
    ack_read, ack_write = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(write_fd), str(ack_read), str(replies)],
                             pass_fds=(write_fd, ack_read))
    os.close(write_fd)
    os.close(ack_read)
    out = []
    try:
        for _ in range(replies):
            data = os.read(read_fd, 24)
            now = time.monotonic()
            if not data:
                break
            out.append((now - float(data)) * 1e3)
            os.write(ack_write, b".")
    finally:
        stop.set()
        child.wait()
        os.close(read_fd)
        os.close(ack_write)
        for t in burners:
            t.join()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=7, help="threads running Python beside the reader")
    parser.add_argument("--replies", type=int, default=200)
    args = parser.parse_args()

    from scorer.judge.clock import GIL_SWITCH_S

    default = sys.getswitchinterval()
    print(f"Python {sys.version.split()[0]}, {args.busy} busy threads, {args.replies} replies a row, "
          f"{os.cpu_count()} cores")
    print(f"{'switch interval':>18s} {'median ms':>10s} {'p90 ms':>8s}")
    for interval in (default, GIL_SWITCH_S):
        sys.setswitchinterval(interval)
        d = sorted(delays_ms(args.replies, args.busy))
        print(f"{interval * 1e3:15.2f} ms {statistics.median(d):10.3f} {d[int(0.9 * (len(d) - 1))]:8.3f}")
    sys.setswitchinterval(default)


if __name__ == "__main__":
    main()
