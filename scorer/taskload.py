"""Load a KernelBench-format task file and build its model and inputs (reference worker only).

Convention (docs/INTERFACES.md): exec the task file as a module, set the shape overrides as
module attributes, `torch.manual_seed(seed)` right before `get_init_inputs()` + construction and
again before `get_inputs()`; inputs are made on CPU and then moved to the device.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping

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


def build_model(module: ModuleType, init_seed: int) -> tuple[torch.nn.Module, list[Any]]:
    torch.manual_seed(init_seed)
    init_inputs = list(module.get_init_inputs())
    model = module.Model(*init_inputs)
    return model, init_inputs


def make_inputs(module: ModuleType, seed: int) -> list[Any]:
    torch.manual_seed(seed)
    return list(module.get_inputs())


def as_output_list(out: Any) -> list[torch.Tensor]:
    """Normalises forward()'s result to a list of tensors (a tuple/list of outputs, or one)."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)) and all(isinstance(o, torch.Tensor) for o in out):
        return list(out)
    raise TypeError(f"forward() returned {type(out).__name__}, expected a tensor or a tuple of tensors")
