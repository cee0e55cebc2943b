"""Foreign compute while timing (scorer/gpu/contention.py): the judge's own process tree is not
foreign, a detached burner is, and a scoring beside one is re-timed and flagged contended with
the evidence in score.json."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scorer.gpu import contention
from tests.scorer.conftest import score_file
from tests.shared.waiting import wait_until

BURN = "import time\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass\n"


def detached_burners(count: int, seconds: float) -> list[int]:
    """CPU burners that are not the test's children (their shell parent exits, so init adopts
    them): for the judge they are another process's load, as an agent's would be."""
    code = BURN.format(seconds=seconds).replace("\n", "\\n")
    script = " ".join(f"{sys.executable} -c \"$(printf '{code}')\" >/dev/null 2>&1 & echo $!;" for _ in range(count))
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout
    return [int(p) for p in out.split()]


@pytest.fixture
def burners() -> Iterator[list[int]]:
    pids = detached_burners(2, 120)
    try:
        for pid in pids:  # past the interpreter's start, in the loop: 0.2 s of CPU time
            wait_until(lambda pid=pid: contention.tree_cpu_ms(pid) >= 200, 30, f"burner {pid} to burn")
        yield pids
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_own_children_are_not_foreign() -> None:
    """What a child of the judge burns is counted as the judge's own CPU time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with contention.watch("cpu") as seen:
        child = subprocess.Popen([sys.executable, "-c", BURN.format(seconds=1.5)])
        child.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    burned = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert burned > 0.2
    own_s = (seen.own_cpu_cores or 0.0) * seen.window_s
    assert own_s == pytest.approx(burned, rel=0.3, abs=0.05)


def _burn_in_child(seconds: float) -> None:
    subprocess.run([sys.executable, "-c", BURN.format(seconds=seconds)], check=True)


def test_load_is_read_over_the_timed_sections_alone() -> None:
    """A watch that saw timed sections (the timer's exclusive holds) reads the load over them, not
    over the checks and lock waits around them. Read on the judge's own CPU time, which other
    work on a busy test box cannot change: a child burning outside the section is not in it."""
    with contention.watch("cpu") as seen:
        _burn_in_child(1.0)
        with contention.timed_section():
            time.sleep(0.5)
        _burn_in_child(0.5)
    assert seen.sections == 1 and seen.timed_s == pytest.approx(0.5, abs=0.15)
    assert seen.window_s > 1.8
    assert (seen.own_cpu_cores or 0.0) < 0.3, seen.evidence()
    assert seen.evidence()["sections"] == 1

    # Inside a section, the child's CPU time is read in full (as much as a loaded box gave it).
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with contention.watch("cpu") as busy:
        time.sleep(0.3)
        with contention.timed_section():
            _burn_in_child(0.8)
        with contention.timed_section():
            time.sleep(0.2)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    burned = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert busy.sections == 2 and burned > 0.1
    assert (busy.own_cpu_cores or 0.0) * busy.timed_s == pytest.approx(burned, rel=0.3, abs=0.05), busy.evidence()


def test_sections_reach_every_open_watch_and_none_after() -> None:
    with contention.watch("cpu") as outer:
        with contention.watch("cpu") as inner:
            with contention.timed_section():
                time.sleep(0.05)
        with contention.timed_section():
            time.sleep(0.05)
    with contention.timed_section():  # no watch open: nothing records it
        pass
    assert (outer.sections, inner.sections) == (2, 1)


def test_gpu_samples_count_for_the_sections_they_mostly_cover() -> None:
    """NVML averages SM use over its sampling period: a sample counts for a timed section when at
    least half of the period before its timestamp lay inside one, so a neighbour's burst that ended
    as the freeze began is not read into the timing, and one that ran through it is."""

    class Sample:
        def __init__(self, pid: int, stamp_ms: int, sm: int) -> None:
            self.pid, self.timeStamp, self.smUtil, self.memUtil = pid, stamp_ms * 1000, sm, 0

    # pid 7 samples every 100 ms; the section is 1030-1480 ms.
    burst_before = [Sample(7, t, 80) for t in range(650, 1100, 100)]  # its last covers 950-1050 ms
    assert contention.sample_period_us(burst_before) == 100_000
    section = [(1_030_000, 1_480_000)]
    kept = contention.in_sections(burst_before, section, since_us=0)
    assert kept == [], "the sample ending 20 ms into the section covers mostly the time before it"
    through = burst_before + [Sample(7, t, 60) for t in range(1150, 1650, 100)]
    kept = contention.in_sections(through, section, since_us=0)
    assert [s.timeStamp // 1000 for s in kept] == [1150, 1250, 1350, 1450]
    # Without sections the whole window counts, from its start.
    assert len(contention.in_sections(through, [], since_us=900_000)) == len(through) - 3  # 650-850 before it
    # One sample of a process: the default period.
    assert contention.sample_period_us([Sample(9, 5, 50)]) == contention._NVML_PERIOD_US


def test_detached_burners_are_foreign(burners: list[int]) -> None:
    assert burners and all(Path(f"/proc/{p}").exists() for p in burners)
    with contention.watch("cpu") as seen:
        time.sleep(1.0)
    assert seen.contended
    assert (seen.foreign_cpu_cores or 0.0) >= contention.CPU_FOREIGN_CORES
    assert (seen.own_cpu_cores or 0.0) < 0.3, "the judge only slept"
    assert seen.evidence()["foreign_cpu_cores"] >= contention.CPU_FOREIGN_CORES


def test_scoring_beside_a_burner_is_retimed_and_flagged(demo, burners: list[int], tmp_path: Path) -> None:
    score = score_file(demo, "swish", demo.root / "solutions" / "swish" / "kernel.py", repetitions=5)
    assert score.verdict == "passed", score.error
    assert score.contended
    assert score.contention["retimed"] is True
    windows = score.contention["windows"]
    # The baseline (before kernel.py exists) and the kernel's timing, each watched and re-timed once.
    assert [w["stage"] for w in windows] == ["baseline", "baseline", "kernel", "kernel"]
    assert all(w["foreign_cpu_cores"] >= contention.CPU_FOREIGN_CORES for w in windows)
    path = tmp_path / "score.json"
    score.write(path)
    again = type(score).read(path)
    assert again.contended and again.contention["windows"] == windows


def test_gpu_samples_of_other_processes_are_foreign() -> None:
    """The NVML side's arithmetic on samples as NVML returns them (pid, smUtil, memUtil): the
    judge's own pids are not foreign, an idle process is not, a computing one is."""

    class Sample:
        def __init__(self, pid: int, sm: int, mem: int = 0) -> None:
            self.pid, self.smUtil, self.memUtil = pid, sm, mem

    own = {os.getpid(), 4242}
    samples = [Sample(os.getpid(), 90), Sample(4242, 40), Sample(777, 0), Sample(888, 3), Sample(999, 60), Sample(999, 75)]
    foreign, note = contention._foreign_gpu(samples, own)
    if note:  # this test runs in a pid namespace of its own: only the count can be judged
        assert [e["pid"] for e in foreign] == [4242]
    else:
        assert foreign == [{"pid": 999, "sm_pct": 75, "mem_pct": 0}]


@pytest.mark.gpu
def test_cuda_burner_is_seen_by_nvml(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    pytest.importorskip("pynvml")
    from scorer.gpu.lock import device_lock_key

    key = device_lock_key("cuda:0")
    ready = tmp_path / "computing"
    # It says when its CUDA context is up and its first matmuls are done: from then on it computes.
    code = ("import torch, time\nx = torch.randn(8192, 8192, device='cuda')\nend = time.time() + 120\n"
            "while time.time() < end:\n    x = x @ x; x = x / x.norm()\n    torch.cuda.synchronize()\n"
            f"    open('{ready}', 'a').close()\n")
    burner = subprocess.Popen(["sh", "-c", f"{sys.executable} -c \"{code}\" >/dev/null 2>&1 & echo $!"],
                              stdout=subprocess.PIPE, text=True)
    pid = int((burner.communicate()[0] or "0").strip())
    try:
        wait_until(lambda: ready.exists() or not Path(f"/proc/{pid}").exists(), 120, "the CUDA burner's first matmuls")
        assert ready.exists(), "the CUDA burner ended before its first matmul"
        with contention.watch("cuda", key) as seen:
            time.sleep(2)
        assert seen.contended, seen.evidence()
        assert any(e["sm_pct"] >= contention.GPU_FOREIGN_SM_PCT for e in seen.foreign_gpu)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
