"""Load a KernelBench-format task file and build its model and inputs (reference worker only).

Convention (docs/INTERFACES.md): exec the task file as a module, set the shape overrides as
module attributes, `torch.manual_seed(seed)` right before `get_init_inputs()` + construction and
its effect again before `get_inputs()` (`seed_draws`). Inputs are made where they are used: `get_inputs()` runs with the
scoring device as torch's default device, so an upstream `torch.rand(4096, 393216)` is drawn on the
GPU (no 6.4 GB host tensor, no host-to-device copy). Both workers draw the same seeds on the same
device and torch, so they hold bit-identical inputs without ever sending one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import random
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import torch


def load_module(path: Path, name: str, overrides: Mapping[str, Any] | None = None) -> ModuleType:
    """Executes `path` as a fresh module named `name` and applies `overrides` to its globals."""
    spec = importlib.util.spec_from_file_location(name, str(path))
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    for key, value in (overrides or {}).items():
        setattr(module, key, value)
    return module


def to_device(obj: Any, device: torch.device | str) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_device(o, device) for o in obj)
    return obj


def to_double(obj: Any) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.double() if obj.is_floating_point() else obj
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_double(o) for o in obj)
    return obj


def build_model(module: ModuleType, init_seed: int, class_name: str = "Model",
                init_inputs: list[Any] | None = None) -> tuple[torch.nn.Module, list[Any]]:
    """`class_name` built as the scorer builds it: seed, then get_init_inputs, then construct.
    Give the reference's `init_inputs` to build a solution with the same arguments (a solution
    module has no get_init_inputs of its own)."""
    torch.manual_seed(init_seed)
    init_inputs = list(module.get_init_inputs()) if init_inputs is None else list(init_inputs)
    model = getattr(module, class_name)(*init_inputs)
    return model, init_inputs


# Bound when the scorer is imported, before any kernel: a C object whose methods no kernel can replace.
_CPU_GENERATOR = torch.default_generator


def seed_draws(seed: int, device: torch.device | str = "cpu") -> None:
    """What `torch.manual_seed(seed)` does for the draws a task makes on `device` (the CPU's
    generator, and every CUDA device's once CUDA is in use), without its lazy seeding of devices
    never initialised, which formats the whole Python stack for each of them (CUDA, XPU, MTIA) on
    every call: 2-4 ms an input set in the kernel worker, under its deep stack and the scorer
    turn's profile function, and less in the reference worker's calibration, so a 0.4 ms host
    kernel's judge-clocked batch read 5-7x its timed calls."""
    _CPU_GENERATOR.manual_seed(seed)
    if torch.device(device).type == "cuda" or torch.cuda.is_initialized():
        torch.cuda.manual_seed_all(seed)


def make_inputs(module: ModuleType, seed: int, device: torch.device | str = "cpu") -> list[Any]:
    """The task's inputs for `seed`, made on `device`; a tensor the task makes elsewhere on purpose
    (an explicit `device="cpu"`) is moved there. Python's and numpy's generators are seeded too,
    so a task drawing from them is as reproducible across processes as one drawing from torch."""
    seed_draws(seed, device)
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % (1 << 32))
    with torch.device(device):
        inputs = list(module.get_inputs())
    return to_device(inputs, device)


def input_digest(inputs: list[Any]) -> str:
    """A short fingerprint of an input set (an evenly strided sample of each tensor's bits, repr of
    the rest), computed where the inputs live: it tells two workers' draws apart without moving
    them. Only a diagnostic: a worker that lies about it only misreports its own inputs."""
    h = hashlib.sha256()
    for obj in inputs:
        if isinstance(obj, torch.Tensor):
            h.update(f"{tuple(obj.shape)}{obj.dtype}".encode())
            flat = obj.detach().reshape(-1)
            if flat.numel():
                sample = flat[:: max(1, flat.numel() // (1 << 16))].contiguous()
                h.update(sample.cpu().view(torch.uint8).numpy().tobytes())
        else:
            h.update(repr(obj).encode())
    return h.hexdigest()[:16]


def as_output_list(out: Any) -> list[torch.Tensor]:
    """Normalises forward()'s result to a list of tensors (a tuple/list of outputs, or one)."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)) and all(isinstance(o, torch.Tensor) for o in out):
        return list(out)
    raise TypeError(f"forward() returned {type(out).__name__}, expected a tensor or a tuple of tensors")
