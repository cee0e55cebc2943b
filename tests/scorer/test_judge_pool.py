"""Judge processes end with the driver that started them (scorer/judge/pool.py), and take their
workers with them. A real scoring in a real judge process; the driver is SIGKILLed mid-scoring, as
a time limit kills a benchmark part. CPU."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.scorer.conftest import KERNELS, REPO
from tests.shared.waiting import wait_until

_DRIVER = """
import sys, time
from pathlib import Path
from scorer.judge.pool import judge_pool
from scorer.judge.session import ScoringSession
from scorer.options import ScoreOptions
from scorer.tasks.suites import load_suite

def score(kernel):
    options = ScoreOptions(device="cpu", repetitions=3, warmup=1, load_s=60, correctness_s=300, timing_s=60)
    with ScoringSession(options) as session:
        return session.score(load_suite("demo"), "swish", Path(kernel), device="cpu").verdict

if __name__ == "__main__":
    print(judge_pool(1).submit(score, sys.argv[1]).result(), flush=True)
"""


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            kids.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(name))
    return kids


def _tree(root: int) -> set[int]:
    kids, seen, todo = _children(), set(), [root]
    while todo:
        pid = todo.pop()
        seen.add(pid)
        todo += kids.get(pid, [])
    return seen


def _alive(pids: set[int]) -> set[int]:
    # A zombie has ended; its parent (reparented to init) reaps it.
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


def _cpu_s(pid: int) -> float:
    """CPU seconds the process has used (user and system), 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _run_driver(tmp_path: Path, kernel: Path) -> subprocess.Popen[str]:
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    env = {**os.environ, "PYTHONPATH": str(REPO), "TRITON_INTERPRET": "1"}
    return subprocess.Popen([sys.executable, str(script), str(kernel)], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_a_judge_scores_through_the_pool(tmp_path: Path) -> None:
    driver = _run_driver(tmp_path, REPO / "suites/demo/solutions/swish/kernel.py")
    out, err = driver.communicate(timeout=600)
    assert driver.returncode == 0, err[-2000:]
    assert out.strip() == "passed"


def test_a_killed_driver_takes_its_judges_and_their_workers(tmp_path: Path) -> None:
    driver = _run_driver(tmp_path, KERNELS / "infinite_loop.py")  # forward never returns
    tree: set[int] = set()
    try:
        # Kill once the judge, its fork server and the kernel and reference workers are up, and the
        # kernel's forward spins: a process of the tree has burned a second of CPU since then.
        wait_until(lambda: len(_tree(driver.pid)) > 5 or driver.poll() is not None, 300, "the scoring's processes",
                   poll_s=0.2)
        assert driver.poll() is None, f"the driver ended: {driver.communicate(timeout=60)}"
        before = {pid: _cpu_s(pid) for pid in _tree(driver.pid)}
        wait_until(lambda: any(_cpu_s(pid) - before.get(pid, 0.0) >= 1.0 for pid in _tree(driver.pid)), 120,
                   "the kernel's forward to spin", poll_s=0.2)
        tree = _tree(driver.pid) - {driver.pid}
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        deadline = time.monotonic() + 30
        while _alive(tree) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(tree), {pid: Path(f"/proc/{pid}/cmdline").read_bytes()[:120] for pid in _alive(tree)}
    finally:
        if driver.poll() is None:
            driver.kill()
        for pid in _alive(tree):  # what this test started, should the pool fail to end it
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
