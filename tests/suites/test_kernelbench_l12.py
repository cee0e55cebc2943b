"""kernelbench levels 1 and 2: every task loads, its reference runs at test size, and its
Triton solution (run by the interpreter on CPU) matches the reference within the task's
tolerance, set up the way the scorer does it (same seed before each construction, then
Model's state_dict loaded into ModelNew)."""

from __future__ import annotations

import os

import pytest
import torch

from scorer.checks.static import analyze_source
from scorer.tasks.lint import load_task_module, make_inputs, outputs_close, run_model
from scorer.tasks.load import build_model
from scorer.tasks.suites import Task, load_suite

SUITE = load_suite("kernelbench")
L12_IDS = sorted(t for t in SUITE.tasks if t.startswith(("level1_", "level2_")))
SEED = 1234


def build_pair(task: Task, shapes: dict, device: str = "cpu") -> tuple[torch.nn.Module, torch.nn.Module, list]:
    """Model and ModelNew with identical state, plus inputs, all on `device`."""
    assert task.solution is not None, f"{task.id} has no solution"
    ref_module = load_task_module(task.path, shapes)
    sol_module = load_task_module(task.solution)
    model, init = build_model(ref_module, SEED)
    model_new, _ = build_model(sol_module, SEED, "ModelNew", init_inputs=init)
    ref_state = model.state_dict()
    new_state = model_new.state_dict()
    # The scorer copies Model's state only when names and shapes match, so a solution that
    # renames a parameter would silently run with other weights: require the match here.
    assert {k: v.shape for k, v in ref_state.items()} == {k: v.shape for k, v in new_state.items()}, task.id
    model_new.load_state_dict(ref_state)
    model.to(device).eval()
    model_new.to(device).eval()
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in make_inputs(ref_module, SEED + 1)]
    return model, model_new, inputs


def _solution_vs_reference(task: Task, shapes: dict, device: str = "cpu") -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    model, model_new, inputs = build_pair(task, shapes, device)
    expected = run_model(model, inputs)
    actual = run_model(model_new, [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    return expected, actual


def test_level_counts() -> None:
    level1 = [t for t in L12_IDS if t.startswith("level1_")]
    level2 = [t for t in L12_IDS if t.startswith("level2_")]
    assert len(level1) >= 14 and len(level2) >= 11


@pytest.mark.parametrize("task_id", L12_IDS)
def test_manifest_entry_complete(task_id: str) -> None:
    task = SUITE.tasks[task_id]
    assert task.level == int(task_id[5])
    assert task.category and task.dtype in ("float32", "float16", "bfloat16")
    assert task.flops is not None and task.bytes_moved is not None and task.bytes_moved > 0
    assert task.test_shapes and task.alt_shapes
    assert task.solution is not None and not task.cuda_only


@pytest.mark.parametrize("task_id", L12_IDS)
def test_solution_passes_static_anti_hack_checks(task_id: str) -> None:
    """Reference solutions are real kernels: no library compute call or other rejected pattern."""
    task = SUITE.tasks[task_id]
    findings = analyze_source(task.solution.read_text(encoding="utf-8"), str(task.solution), SUITE.policy)
    assert [f for f in findings if f.severity == "reject"] == []


@pytest.mark.parametrize("task_id", L12_IDS)
def test_solution_matches_reference(task_id: str) -> None:
    assert os.environ.get("TRITON_INTERPRET") == "1", "run through scripts/run_tests.sh"
    task = SUITE.tasks[task_id]
    expected, actual = _solution_vs_reference(task, task.test_shapes)
    assert len(expected) == len(actual)
    for ref, out in zip(expected, actual, strict=True):
        assert out.shape == ref.shape and out.dtype == ref.dtype
        ok = outputs_close(out, ref, task.tolerance)
        worst = float((out.double() - ref.double()).abs().max())
        assert bool(ok.all()), f"{task_id}: {int((~ok).sum())} of {ok.numel()} mismatch, max abs err {worst:.3g}"
        # The tolerance must be tight enough that a wrong answer fails: a shifted output must not pass.
        if not task.tolerance.exact and ref.dtype.is_floating_point:
            assert not bool(outputs_close(out + 0.1 * (ref.abs().mean() + 1), ref, task.tolerance).all())


@pytest.mark.parametrize("task_id", L12_IDS)
def test_solution_matches_reference_at_alt_shape(task_id: str) -> None:
    task = SUITE.tasks[task_id]
    expected, actual = _solution_vs_reference(task, task.alt_shapes[0])
    for ref, out in zip(expected, actual, strict=True):
        assert bool(outputs_close(out, ref, task.tolerance).all()), task_id


def test_full_size_baseline_is_heavy_enough() -> None:
    """Sizes target >= ~100 us of eager time on an H200: >= ~400 MB moved or >= ~5 GFLOP."""
    for task_id in L12_IDS:
        task = SUITE.tasks[task_id]
        assert task.bytes_moved >= 200e6 or task.flops >= 5e9, task_id


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") == "1", reason="full-size runs need compiled Triton")
@pytest.mark.parametrize("task_id", L12_IDS)
def test_solution_matches_reference_full_size_gpu(task_id: str) -> None:
    task = SUITE.tasks[task_id]
    expected, actual = _solution_vs_reference(task, {}, "cuda")
    for ref, out in zip(expected, actual, strict=True):
        ok = outputs_close(out, ref, task.tolerance)
        worst = float((out.double() - ref.double()).abs().max())
        assert bool(ok.all()), f"{task_id}: {int((~ok).sum())} of {ok.numel()} mismatch, max abs err {worst:.3g}"
    del expected, actual
    torch.cuda.empty_cache()
