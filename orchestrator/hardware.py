"""Which device a sweep's kernels were scored on, as every leaderboard output states it.

The label comes from the trials' score.json (the GPU's name, else CPU); while no trial has been
scored, from the frozen spec's `score.device`. On CPU, Triton runs in its interpreter, so the
outputs carry `CPU_NOTE` beside the numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from orchestrator.index import Index
from orchestrator.prepare import FROZEN_SPEC
from orchestrator.trial_files import read_score

CPU_NOTE = ("Scored on CPU (Triton in its interpreter): these speedups and scores only say that the "
            "kernels ran correctly; they say nothing about speed on a GPU, so do not compare them.")


class Hardware(BaseModel):
    device: str
    """The GPU's name, "cpu", or what is known before a trial is scored ("unknown", "auto (no trial scored yet)")."""
    cpu_caveat: str | None = None
    """`CPU_NOTE` when the device is the CPU, else None."""


def hardware_label(sweep_dir: Path, index: Index) -> str:
    """The scoring device as the trials' score.json recorded it (GPU name, else CPU), or the
    frozen spec's `score.device` while no trial has finished."""
    for row in index.trials:
        if row.state == "done":
            score = read_score(sweep_dir / row.rel_dir)
            env = score.environment if score else {}
            if env.get("gpu"):
                return str(env["gpu"])
            if env:
                return "CPU"
    try:
        spec = json.loads((sweep_dir / FROZEN_SPEC).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "unknown"
    device = str((spec.get("score") or {}).get("device") or "auto")
    return "CPU" if device == "cpu" else f"{device} (no trial scored yet)"


def hardware_of(label: str) -> Hardware:
    """`hardware_label`'s text as the boards' `hardware` field."""
    if label == "CPU":
        return Hardware(device="cpu", cpu_caveat=CPU_NOTE)
    return Hardware(device=label)


def hardware_line(hardware: Hardware | None) -> str | None:
    """"Hardware: <device>", and on CPU the caveat: the line the text outputs print."""
    if hardware is None:
        return None
    device = "CPU" if hardware.device == "cpu" else hardware.device
    return f"Hardware: {device}" + (f". {hardware.cpu_caveat}" if hardware.cpu_caveat else "")
