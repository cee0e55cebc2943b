"""The sweep's default TrialRunner: turns a planned trial into a `harnesses.trial.TrialSpec` and
runs it. The only module of the orchestrator that knows run_trial's signature.

GPU exclusivity: run_trial's `score_slot` (the limits' async context manager yielding the device
to score on) holds a device only while scoring. Each agent sandbox sees one GPU (round-robin), and
with a freeze server it is frozen while a judge times on that GPU (scorer/gpu/freeze.py), so the
agents of the other GPUs go on.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from harnesses.trial import TrialSpec, run_trial
from orchestrator.limits import Limits
from orchestrator.planner import PlannedTrial
from orchestrator.spec import SweepSpec
from sandbox import SandboxConfig
from sandbox.docker_client import SWEEP as SWEEP_LABEL
from scorer.gpu.freeze import FreezeServer


def score_options(spec: SweepSpec) -> dict[str, Any]:
    """Flags for `python -m scorer score`; only what the spec overrides."""
    opts = spec.score.model_dump(exclude={"device"}, exclude_none=True)
    return {k: v for k, v in opts.items() if v is not False}


def sandbox_config(spec: SweepSpec, sweep_label: str) -> SandboxConfig:
    return SandboxConfig(
        backend=spec.sandbox.backend,
        image=spec.sandbox.image,
        memory=spec.sandbox.memory,
        cpus=spec.sandbox.cpus,
        labels={SWEEP_LABEL: sweep_label},
    )


class HarnessRunner:
    def __init__(self, spec: SweepSpec, limits: Limits, sweep_label: str, freezer: FreezeServer | None = None) -> None:
        self.spec = spec
        self.freezer = freezer
        self.limits = limits
        self.sandbox = sandbox_config(spec, sweep_label)
        self.score_options = score_options(spec)
        self._round_robin = itertools.cycle(limits.devices)

    def trial_spec(self, trial: PlannedTrial, device: str) -> TrialSpec:
        model = self.spec.model(trial.model)
        sandbox = self.sandbox
        if device.startswith("cuda:"):
            sandbox = sandbox.model_copy(update={"gpus": [int(device.partition(":")[2])]})
        return TrialSpec(
            trial_id=trial.trial_id,
            suite=trial.suite_root,
            task=trial.task,
            model=model.id,
            model_options=model.client_options(),
            harness=self.spec.harness_of(model),
            sandbox=sandbox,
            budget=self.spec.budget,
            device="cpu" if device == "cpu" else "cuda",
            sample=trial.sample,
            score_options=self.score_options,
        )

    async def __call__(self, trial: PlannedTrial, out_dir: Path) -> None:
        spec = self.trial_spec(trial, next(self._round_robin))
        # The agent's sandbox sees its round-robin GPU; the slot says which device scoring holds.
        await run_trial(spec, out_dir, score_slot=self.limits.scoring_device, freezer=self.freezer)
