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
from pathlib import Path
from typing import Iterator

import pytest

from scorer.gpu import contention
from tests.scorer.conftest import score_file

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
    time.sleep(0.3)
    try:
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
def test_cuda_burner_is_seen_by_nvml() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    pytest.importorskip("pynvml")
    from scorer.gpu.lock import device_lock_key

    key = device_lock_key("cuda:0")
    code = ("import torch, time\nx = torch.randn(8192, 8192, device='cuda')\nend = time.time() + 30\n"
            "while time.time() < end:\n    x = x @ x; x = x / x.norm()\n    torch.cuda.synchronize()\n")
    burner = subprocess.Popen(["sh", "-c", f"{sys.executable} -c \"{code}\" >/dev/null 2>&1 & echo $!"],
                              stdout=subprocess.PIPE, text=True)
    pid = int((burner.communicate()[0] or "0").strip())
    try:
        time.sleep(8)  # CUDA context and the first matmuls
        with contention.watch("cuda", key) as seen:
            time.sleep(2)
        assert seen.contended, seen.evidence()
        assert any(e["sm_pct"] >= contention.GPU_FOREIGN_SM_PCT for e in seen.foreign_gpu)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
