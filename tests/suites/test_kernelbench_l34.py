"""kernelbench levels 3 and 4: tasks load, references run, Triton solutions match at test sizes."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from scorer.tasks.suites import Task, load_suite

SUITE = load_suite("kernelbench")
TASK_IDS = sorted(t for t in SUITE.tasks if t.startswith(("level3_", "level4_")))

# What a solution's host code may call: allocation, views and launch arithmetic. Compute must
# happen in @triton.jit kernels.
ALLOWED_TORCH = {"empty", "empty_like", "zeros", "zeros_like"}
ALLOWED_METHODS = {"contiguous", "view", "reshape", "transpose", "permute", "stride", "size", "numel", "dim"}
ALLOWED_NAMES = {"super", "range", "max", "min", "len", "float", "int", "isinstance"}


def _exec_module(path: Path, shapes: dict[str, Any]) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_kb34_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, value in shapes.items():
        setattr(module, name, value)
    return module


def _as_tuple(out: Any) -> tuple[torch.Tensor, ...]:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _run_pair(task: Task, shapes: dict[str, Any], seed: int = 0):
    """Construct Model and ModelNew as the scorer does (same seed, Model's state copied over)."""
    task_mod = _exec_module(task.path, shapes)
    assert task.solution is not None
    sol_mod = _exec_module(task.solution, {})
    torch.manual_seed(seed)
    init = task_mod.get_init_inputs()
    model = task_mod.Model(*init)
    torch.manual_seed(seed)
    model_new = sol_mod.ModelNew(*init)
    model_new.load_state_dict(model.state_dict())
    torch.manual_seed(seed)
    inputs = task_mod.get_inputs()
    with torch.no_grad():
        return _as_tuple(model(*inputs)), _as_tuple(model_new(*inputs))


def test_levels_3_and_4_are_registered() -> None:
    assert sum(t.startswith("level3_") for t in TASK_IDS) == 9
    assert sum(t.startswith("level4_") for t in TASK_IDS) == 7
    for task_id in TASK_IDS:
        task = SUITE.tasks[task_id]
        assert task.level == int(task_id[5]) and task.category and task.dtype
        assert task.flops and task.bytes_moved and task.test_shapes and task.alt_shapes
        assert task.solution is not None and not task.cuda_only


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_solution_matches_reference_at_test_shapes(task_id: str) -> None:
    task = SUITE.tasks[task_id]
    tol = task.tolerance
    for shapes in (task.test_shapes, *task.alt_shapes):
        ref, out = _run_pair(task, shapes)
        assert len(ref) == len(out)
        for r, o in zip(ref, out, strict=True):
            assert r.shape == o.shape and r.dtype == o.dtype, f"{task_id} {shapes}"
            assert torch.isfinite(r.double()).all()
            assert torch.allclose(o.double(), r.double(), rtol=tol.rtol, atol=tol.atol), (
                f"{task_id} {shapes}: max abs error {(o.double() - r.double()).abs().max().item():.3g}"
            )


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_solution_host_code_only_allocates_views_and_launches(task_id: str) -> None:
    task = SUITE.tasks[task_id]
    assert task.solution is not None
    tree = ast.parse(task.solution.read_text(encoding="utf-8"))
    host_functions = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name != "__init__"
        and not any("jit" in ast.unparse(d) for d in node.decorator_list)
    ]
    assert any(f.name == "forward" for f in host_functions)
    jitted = {
        node.name for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list)
    }
    for func in host_functions:
        for call in (n for n in ast.walk(func) if isinstance(n, ast.Call)):
            target = call.func
            if isinstance(target, ast.Subscript):  # kernel[grid](...)
                assert isinstance(target.value, ast.Name) and target.value.id in jitted, ast.unparse(call)
            elif isinstance(target, ast.Name):
                assert target.id in ALLOWED_NAMES or target.id.startswith("_"), ast.unparse(call)
            elif isinstance(target, ast.Attribute):
                root = ast.unparse(target.value)
                if root == "torch":
                    assert target.attr in ALLOWED_TORCH, ast.unparse(call)
                elif root == "triton":
                    assert target.attr in {"cdiv", "next_power_of_2"}, ast.unparse(call)
                else:
                    assert target.attr in ALLOWED_METHODS, f"{func.name}: {ast.unparse(call)}"


def test_moe_gating_returns_distinct_experts_and_normalised_weights() -> None:
    task = SUITE.tasks["level4_3_moe_topk_gating"]
    ref, out = _run_pair(task, task.test_shapes, seed=3)
    weights, idx = out
    assert torch.equal(idx, ref[1])
    assert torch.allclose(weights.sum(-1), torch.ones(weights.shape[0]))
    assert (idx[:, 0] != idx[:, 1]).all() and (weights[:, 0] >= weights[:, 1]).all()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("task_id", TASK_IDS)
def test_solution_matches_reference_on_gpu_at_full_size(task_id: str) -> None:
    task = SUITE.tasks[task_id]
    task_mod = _exec_module(task.path, {})
    sol_mod = _exec_module(task.solution, {})
    torch.manual_seed(0)
    init = task_mod.get_init_inputs()
    model = task_mod.Model(*init).cuda()
    torch.manual_seed(0)
    model_new = sol_mod.ModelNew(*init).cuda()
    model_new.load_state_dict(model.state_dict())
    torch.manual_seed(0)
    inputs = [x.cuda() for x in task_mod.get_inputs()]
    with torch.no_grad():
        for r, o in zip(_as_tuple(model(*inputs)), _as_tuple(model_new(*inputs)), strict=True):
            assert torch.allclose(o.double(), r.double(), rtol=task.tolerance.rtol, atol=task.tolerance.atol)
