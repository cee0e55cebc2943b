"""fp4-quant suite: references follow the NVFP4 format, Triton solutions match them bit for bit."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from scorer.tasks.suites import Task, load_suite

SUITE = load_suite("fp4-quant")
TASK_IDS = sorted(SUITE.tasks)
E2M1_GRID = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def _exec_module(path: Path, shapes: dict[str, Any]) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_fp4_{path.parent.name}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, value in shapes.items():
        setattr(module, name, value)
    return module


def _run_pair(task: Task, shapes: dict[str, Any], device: str, seed: int = 0):
    """Construct Model and ModelNew as the scorer does (same seed, Model's state copied over)."""
    task_mod = _exec_module(task.path, shapes)
    assert task.solution is not None
    sol_mod = _exec_module(task.solution, {})
    torch.manual_seed(seed)
    init = task_mod.get_init_inputs()
    model = task_mod.Model(*init).to(device)
    torch.manual_seed(seed)
    model_new = sol_mod.ModelNew(*init).to(device)
    model_new.load_state_dict(model.state_dict())
    torch.manual_seed(seed)
    inputs = [x.to(device) for x in task_mod.get_inputs()]
    with torch.no_grad():
        return task_mod, inputs, model(*inputs), model_new(*inputs)


def _dequantize(packed: torch.Tensor, scales: torch.Tensor, global_scale: torch.Tensor) -> torch.Tensor:
    codes = torch.stack([packed & 0xF, packed >> 4], dim=-1).flatten(-2).long()
    values = E2M1_GRID[codes & 7] * torch.where(codes >= 8, -1.0, 1.0)
    block_scale = scales.view(torch.float8_e4m3fn).float() / global_scale.float()
    return (values.view(*scales.shape, 16) * block_scale[..., None]).flatten(-2)


def test_suite_manifest_is_exact_with_six_tasks() -> None:
    assert SUITE.tolerance.exact
    assert len(TASK_IDS) == 6
    assert {t.split("_h")[-1] for t in TASK_IDS} == {"4096", "14336"}
    for task in SUITE.tasks.values():
        assert task.solution is not None and task.flops and task.bytes_moved and task.test_shapes


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_solution_is_bit_exact_at_test_shapes(task_id: str) -> None:
    task = SUITE.tasks[task_id]
    for shapes in (task.test_shapes, *task.alt_shapes):
        _, _, ref, out = _run_pair(task, shapes, "cpu")
        assert len(ref) == len(out) == 2
        for r, o in zip(ref, out, strict=True):
            assert r.dtype == o.dtype == torch.uint8 and r.shape == o.shape
            mismatches = (r != o).sum().item()
            assert mismatches == 0, f"{task_id} {shapes}: {mismatches} bytes differ"


@pytest.mark.parametrize("task_id", ["nvfp4_quant_h4096", "silu_mul_nvfp4_h4096", "add_rmsnorm_nvfp4_h4096"])
def test_reference_dequantizes_close_to_its_input(task_id: str) -> None:
    task = SUITE.tasks[task_id]
    task_mod, inputs, (packed, scales), _ = _run_pair(task, task.test_shapes, "cpu")
    rows, hidden = packed.shape[0], packed.shape[1] * 2
    assert scales.shape == (rows, hidden // 16)
    if task_id.startswith("nvfp4_quant"):
        target = inputs[0].float()
    elif task_id.startswith("silu_mul"):
        x = inputs[0].float()
        target = torch.nn.functional.silu(x[:, :hidden]) * x[:, hidden:]
    else:
        return  # the RMSNorm output is not an input; the quantizer is shared with the others
    deq = _dequantize(packed, scales, inputs[-1])
    # E2M1 keeps ~1 significant bit: half a grid step of the block's own scale bounds the error.
    blocks = target.view(rows, -1, 16)
    bound = blocks.abs().amax(-1, keepdim=True) / 6 * 1.0 * 1.07 + 1e-6
    assert ((deq.view_as(blocks) - blocks).abs() <= bound).all()


def test_reference_rounding_ties_saturation_and_nibble_order() -> None:
    task = SUITE.tasks["nvfp4_quant_h4096"]
    task_mod = _exec_module(task.path, task.test_shapes)
    # Global scale 1 and a block amax of 6 give a block scale of exactly 1.0 (E4M3 0x38).
    ties = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0]
    row = torch.tensor([ties + [-0.25, -6.0, 0.1, -0.0, 0.0, 1.0, -1.5, 4.0]])
    packed, scales = task_mod.nvfp4_quantize(row, torch.tensor([1.0]))
    assert scales.tolist() == [[0x38]]
    codes = [(b >> s) & 0xF for b in packed[0].tolist() for s in (0, 4)]
    # Half-way values go to the even code: 0.25->0, 0.75->1.0, 1.25->1.0, 1.75->2, 2.5->2, 3.5->4, 5->4.
    assert codes[:8] == [0, 2, 2, 4, 4, 6, 6, 7]
    # -0.25 keeps its sign as -0; -0.0 has its sign bit; the low nibble holds the even element.
    assert codes[8:] == [0x8, 0xF, 0x0, 0x8, 0x0, 0x2, 0xB, 0x6]


def test_block_scale_saturates_at_e4m3_max() -> None:
    task = SUITE.tasks["nvfp4_quant_h4096"]
    task_mod = _exec_module(task.path, task.test_shapes)
    row = torch.tensor([[1000.0] + [1.0] * 15])
    packed, scales = task_mod.nvfp4_quantize(row, torch.tensor([6.0]))
    assert scales.tolist() == [[0x7E]]  # 448, the largest finite E4M3
    assert packed[0, 0].item() & 0xF == 7  # 1000 / 448 * 6 saturates to 6


def test_exact_exp_is_accurate() -> None:
    task_mod = _exec_module(SUITE.tasks["silu_mul_nvfp4_h4096"].path, {})
    t = torch.linspace(-87.0, 88.0, 100_003)
    rel = (task_mod.exact_exp(t).double() / torch.exp(t.double()) - 1).abs().max().item()
    assert rel < 1e-6


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("task_id", TASK_IDS)
def test_solution_is_bit_exact_on_gpu_at_full_size(task_id: str) -> None:
    task = SUITE.tasks[task_id]
    task_mod, inputs, ref, out = _run_pair(task, {}, "cuda")
    for r, o in zip(ref, out, strict=True):
        assert torch.equal(r, o), f"{task_id}: {(r != o).sum().item()} bytes differ"
    # The reference's arithmetic is device independent: the CPU run must give the same bytes.
    torch.manual_seed(0)
    model_cpu = task_mod.Model(*task_mod.get_init_inputs())
    with torch.no_grad():
        ref_cpu = model_cpu(*[x.cpu() for x in inputs])
    for r, c in zip(ref, ref_cpu, strict=True):
        assert torch.equal(r.cpu(), c)
