"""What the score was measured on: GPU, driver, library versions (collected in the reference worker)."""

from __future__ import annotations

import functools
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch

from scorer.gpu.lock import device_lock_key

try:
    import triton
except ImportError:
    triton = None

# Bumped whenever what a score measures changes, so scores of different versions are not ranked
# together unnoticed. 0.2.0: GPU timings hold the GPU before the start event and end on the
# caller's stream (0.1.0 timings included host launch and wake-up latency).
SCORER_VERSION = "0.2.0"


@functools.lru_cache(maxsize=1)  # nvidia-smi, where /proc has no version, takes a second a call
def _driver_version() -> str | None:
    proc_file = Path("/proc/driver/nvidia/version")
    if proc_file.is_file():
        match = re.search(r"Kernel Module\s+(?:for \S+\s+)?([\d.]+)", proc_file.read_text(errors="replace"))
        if match:
            return match.group(1)
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None


def _triton_version() -> str | None:
    return str(triton.__version__) if triton is not None else None


# On a CPU both workers run torch's operators on one thread. The cores are shared with whatever else
# runs (CI's other test process, an agent's compile), and a parallel region waits for every one of
# its threads: beside one busy core on a 2-core box a two-thread softmax reference read 5.66 ms a
# call where, quiet, it took 0.053 ms, and the timed repetitions and the batch drifted so far apart
# that the baseline could not be trusted (docs/results/2026-12-06-session18-monitoring-turns-on-h100.md).
# One thread is slowed by no more than the share of a core it is given, alike in the repetitions
# and the batch.
CPU_THREADS = 1


def pin_cpu_threads(device: torch.device) -> None:
    if device.type == "cpu" and torch.get_num_threads() != CPU_THREADS:
        torch.set_num_threads(CPU_THREADS)


def collect_environment(device: torch.device) -> dict[str, Any]:
    gpu = gpu_uuid = None
    if device.type == "cuda":
        gpu = torch.cuda.get_device_properties(device).name
        gpu_uuid = device_lock_key(device)  # the GPU lock's key, as the workers compute it
    return {
        "gpu": gpu,
        "gpu_uuid": gpu_uuid,
        "driver": _driver_version() if device.type == "cuda" else None,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "hip": getattr(torch.version, "hip", None),
        "triton": _triton_version(),
        "python": platform.python_version(),
        "platform": f"{platform.system()}-{platform.machine()}",
        "cpu": platform.processor() or None,
        "cpu_threads": torch.get_num_threads() if device.type == "cpu" else None,
        "scorer_version": SCORER_VERSION,
        "executable": sys.executable,
    }
