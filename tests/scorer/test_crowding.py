"""An out-of-memory on a GPU that other processes crowded is not the kernel's verdict
(scorer/gpu/crowding.py). NVML is the hardware's library: here a stand-in module answers with the
figures a crowded H100 gave (8 scorings at once), and the judge's own code reads and decides."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

from scorer.errors import ScorerBroken
from scorer.gpu import crowding
from scorer.gpu.contention import own_tree, process_table
from scorer.judge.scoring import Judge
from scorer.options import ScoreOptions
from scorer.tasks.suites import Suite

GIB = 1 << 30
TOTAL = 80 * GIB
# torch's own message for a CUDA allocation that failed
TORCH_OOM = ("timing: out of memory: CUDA out of memory. Tried to allocate 128.00 MiB. GPU 0 has a total capacity of "
             "79.19 GiB of which 101.06 MiB is free. Of the allocated memory 1.02 GiB is allocated by PyTorch")


def test_the_failed_allocation_is_read_from_torchs_message() -> None:
    assert crowding.requested_bytes(TORCH_OOM) == 128 << 20
    assert crowding.requested_bytes("Tried to allocate 2.50 GiB.") == int(2.5 * GIB)
    assert crowding.requested_bytes("CUDA error: out of memory") == 0


@pytest.mark.parametrize("own, foreign, requested, crowded", [
    (12 * GIB, 62 * GIB, 128 << 20, True),    # the neighbours took 62 GiB: the H100 case
    (12 * GIB, 1 * GIB, 128 << 20, False),    # a quiet device: the kernel's own doing
    (12 * GIB, 62 * GIB, 70 * GIB, False),    # it asked for more than it would have had alone
    (72 * GIB, 9 * GIB, 1 * GIB, False),      # its own processes at the fit's share, and more asked
    (20 * GIB, 8 * GIB + 1, 0, True),         # just past the headroom the fit leaves others
])
def test_crowded_only_when_neighbours_took_the_promised_share(own, foreign, requested, crowded) -> None:
    memory = crowding.DeviceMemory(TOTAL, own, foreign, 3)
    assert crowding.crowded_out(memory, requested) is crowded


def test_memory_is_split_by_this_process_tree_not_by_name() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        tree = own_tree(process_table())
        entries = [types.SimpleNamespace(pid=os.getpid(), usedGpuMemory=2 * GIB),
                   types.SimpleNamespace(pid=child.pid, usedGpuMemory=3 * GIB),
                   types.SimpleNamespace(pid=1, usedGpuMemory=40 * GIB)]
        memory, why = crowding.split_by_owner(TOTAL, entries, tree)
        assert why == "" and memory == crowding.DeviceMemory(TOTAL, 5 * GIB, 40 * GIB, 1)
        entries[2] = types.SimpleNamespace(pid=1, usedGpuMemory=None)
        memory, why = crowding.split_by_owner(TOTAL, entries, tree)
        assert memory is None and "per-process" in why
    finally:
        child.kill()
        child.wait()


def test_a_scorings_own_memory_is_its_workers_not_its_sibling_scorings(monkeypatch) -> None:
    """A session forks every scoring's workers under one judge: the memory of another scoring's
    worker is a neighbour's, though it is in the judge's tree."""
    ours, sibling = (subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) for _ in range(2))
    try:
        table = process_table()
        entries = [types.SimpleNamespace(pid=ours.pid, usedGpuMemory=12 * GIB),
                   types.SimpleNamespace(pid=sibling.pid, usedGpuMemory=62 * GIB)]
        whole, _ = crowding.split_by_owner(TOTAL, entries, own_tree(table))
        assert whole == crowding.DeviceMemory(TOTAL, 74 * GIB, 0, 0)
        monkeypatch.setitem(sys.modules, "pynvml", _nvml_of(entries))
        memory, why = crowding.read_device_memory("GPU-crowded", roots=(ours.pid,))
        assert why == "" and memory == crowding.DeviceMemory(TOTAL, 12 * GIB, 62 * GIB, 1)
        assert crowding.crowded_out(memory, 4 * GIB)
    finally:
        for child in (ours, sibling):
            child.kill()
            child.wait()


def _nvml_of(entries: list[types.SimpleNamespace]) -> types.ModuleType:
    nvml = types.ModuleType("pynvml")
    nvml.nvmlInit = lambda: None
    nvml.nvmlDeviceGetHandleByUUID = lambda uuid: uuid if uuid == "GPU-crowded" else (_ for _ in ()).throw(KeyError(uuid))
    nvml.nvmlDeviceGetMemoryInfo = lambda handle: types.SimpleNamespace(
        total=TOTAL, used=sum(e.usedGpuMemory for e in entries))
    nvml.nvmlDeviceGetComputeRunningProcesses = lambda handle: list(entries)
    return nvml


def _fake_nvml(foreign_bytes: int, own_bytes: int) -> types.ModuleType:
    return _nvml_of([types.SimpleNamespace(pid=os.getpid(), usedGpuMemory=own_bytes),
                     types.SimpleNamespace(pid=1, usedGpuMemory=foreign_bytes)])


def _cuda_judge(demo: Suite) -> Judge:
    solution = demo.tasks["swish"].solution
    assert solution is not None
    judge = Judge(demo, demo.tasks["swish"], Path(solution), torch.device("cuda"), ScoreOptions(device="cuda"))
    judge._gpu_key = "GPU-crowded"
    return judge


def test_judge_blames_the_neighbours_for_a_crowded_out_of_memory(demo: Suite, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml(foreign_bytes=62 * GIB, own_bytes=12 * GIB))
    with pytest.raises(ScorerBroken, match=r"62\.0 GiB held by 1 other.*not the kernel's verdict"):
        _cuda_judge(demo)._blame_memory(TORCH_OOM)


def test_judge_keeps_the_kernels_verdict_and_the_evidence_on_a_quiet_device(demo: Suite, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml(foreign_bytes=1 * GIB, own_bytes=12 * GIB))
    judge = _cuda_judge(demo)
    judge._blame_memory(TORCH_OOM)
    assert "12.0 GiB this scoring's, 1.0 GiB held by 1 other" in judge._memory_note
    judge._blame_memory("a failure that is no out-of-memory")  # read once, on the first one only


def test_without_nvml_the_verdict_stands_and_says_what_was_unknown(demo: Suite, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails as on a host without nvidia-ml-py
    judge = _cuda_judge(demo)
    judge._blame_memory(TORCH_OOM)
    assert "unknown" in judge._memory_note and "pynvml" in judge._memory_note


def test_a_cpu_scoring_never_asks(demo: Suite, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml(foreign_bytes=62 * GIB, own_bytes=12 * GIB))
    solution = demo.tasks["swish"].solution
    assert solution is not None
    judge = Judge(demo, demo.tasks["swish"], Path(solution), torch.device("cpu"), ScoreOptions(device="cpu"))
    judge._blame_memory(TORCH_OOM.replace("CUDA out of memory", "DefaultCPUAllocator: can't allocate memory"))
    assert judge._memory_note == ""
