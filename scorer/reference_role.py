"""The reference worker: builds the task's Model, makes the input sets from the judge's seeds,
computes reference outputs (plus a float64 CPU reference for float32 tasks) and times the
baseline. It never sees the kernel; everything it returns goes to the judge only.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import torch

from scorer.environment import collect_environment
from scorer.taskload import as_output_list, build_model, load_module, make_inputs, to_device, to_double
from scorer.timing import Clock, TimingPlan, time_forward


FP64_SEEDS = 1


def _cpu(obj: Any) -> Any:
    return to_device(obj, "cpu")


class ReferenceRole:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.device = torch.device("cpu")
        self.model: torch.nn.Module | None = None
        self.sets: list[list[Any]] = []

    def _variant(self, task_path: Path, overrides: dict[str, Any], init_seed: int, seeds: list[int],
                 fp64: bool, name: str) -> tuple[dict[str, Any], torch.nn.Module, list[list[Any]]]:
        module = load_module(task_path, name, overrides)
        model, init_inputs = build_model(module, init_seed)
        state_dict = {k: v.detach().clone() for k, v in model.state_dict().items()}
        model = model.to(self.device)
        # float64 on the task's device: as exact as on CPU (no TF32 in fp64) and far faster on
        # a GPU; one seed is enough to measure the precision a kernel computes at.
        model_fp64 = copy.deepcopy(model).double() if fp64 else None
        sets, records = [], []
        with torch.no_grad():
            for i, seed in enumerate(seeds):
                inputs = to_device(make_inputs(module, seed), self.device)
                outputs = as_output_list(model(*inputs))
                record: dict[str, Any] = {"inputs": _cpu(inputs), "outputs": _cpu(outputs)}
                if model_fp64 is not None and i < FP64_SEEDS:
                    record["outputs_fp64"] = _cpu(as_output_list(model_fp64(*to_double(inputs))))
                records.append(record)
                sets.append(inputs)
        variant = {"init_inputs": _cpu(init_inputs), "state_dict": state_dict, "sets": records}
        return variant, model, sets

    def prepare(self, header: dict[str, Any], _payload: Any) -> tuple[dict[str, Any], Any]:
        self.device = torch.device(header["device"])
        task_path = Path(header["task_path"])
        main, self.model, self.sets = self._variant(
            task_path, header.get("overrides", {}), header["init_seed"], header["seeds"],
            bool(header.get("fp64")), "kernelarena_task")
        alts = []
        for i, alt in enumerate(header.get("alt_shapes", [])):
            variant, _, _ = self._variant(task_path, alt["overrides"], header["init_seed"], [alt["seed"]],
                                          False, f"kernelarena_task_alt{i}")
            alts.append(variant)
        env = collect_environment(self.device)
        return {"ok": True, "environment": env}, {"main": main, "alt": alts}

    def time(self, header: dict[str, Any], _payload: Any) -> tuple[dict[str, Any], Any]:
        assert self.model is not None, "prepare must come before time"
        model: Any = self.model
        if header.get("baseline") == "compile":
            model = torch.compile(model)
        plan = TimingPlan(int(header["warmup"]), int(header["repetitions"]), bool(header["flush_l2"]))
        sets = self.sets[: max(1, int(header["input_sets"]))]
        with torch.no_grad():
            run = time_forward(model, sets, plan, self.device, self.clock)
        return {"ok": True, "timer": run.timer, "times_ms": run.times_ms, "host_times_ms": run.host_times_ms}, None
