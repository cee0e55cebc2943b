"""Whether a task fits on the device, decided before anything is allocated there.

The task's inputs and its Model are built on torch's meta device (shapes, no memory); a forward
there gives the output sizes (where an op has no meta kernel, outputs are taken as large as the
inputs). What scoring holds at once: the reference worker's outputs for every seed, the kernel
worker's outputs of its correctness trials, an input set and the weights in each worker, and for
float32 tasks the float64 reference (weights, inputs and outputs at twice the width) for one seed.
"""

from __future__ import annotations

from typing import Any

import torch

from scorer.tasks.load import as_output_list, make_inputs

USABLE_SHARE = 0.9  # the CUDA context, the allocator's rounding and the kernel's own scratch
MIN_SEEDS = 2  # the in-place refill trial needs a second input set


def tensor_bytes(obj: Any) -> int:
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(o) for o in obj)
    return 0


def _meta_sizes(module: Any, init_seed: int) -> tuple[int, int, int]:
    """(input bytes, weight bytes, output bytes) of one call, measured on the meta device."""
    inputs = make_inputs(module, init_seed, "meta")
    in_bytes = tensor_bytes(inputs)
    torch.manual_seed(init_seed)
    with torch.device("meta"):
        try:
            model = module.Model(*module.get_init_inputs())
        except Exception:
            return in_bytes, 0, in_bytes
    weights = sum(tensor_bytes(t) for t in list(model.parameters()) + list(model.buffers()))
    try:
        with torch.no_grad():
            out_bytes = tensor_bytes(as_output_list(model(*inputs)))
    except Exception:
        out_bytes = in_bytes
    return in_bytes, weights, out_bytes


def needed_bytes(in_bytes: int, weights: int, out_bytes: int, seeds: int, fp64: bool) -> int:
    # The reference worker: weights and one input set; the kernel's: weights, input set 0, the
    # current set and its snapshot for the mutation check.
    workers = 2 * weights + 4 * in_bytes
    retained = (seeds + seeds + 2) * out_bytes  # reference outputs; kernel trials (+ repeat, refill)
    wide = 2 * (in_bytes + weights + out_bytes) if fp64 else 0
    return workers + retained + wide


def seeds_that_fit(module: Any, init_seed: int, seeds: int, device: torch.device, fp64: bool) -> tuple[int, str | None]:
    """(seeds to use, None), or (0, the one-line reason) when even MIN_SEEDS cannot fit."""
    if device.type != "cuda":
        return seeds, None
    try:
        in_bytes, weights, out_bytes = _meta_sizes(module, init_seed)
    except Exception:
        return seeds, None  # a task the meta device cannot build is measured by running it
    return choose_seeds(in_bytes, weights, out_bytes, seeds, torch.cuda.mem_get_info(device)[1], fp64)


def choose_seeds(in_bytes: int, weights: int, out_bytes: int, seeds: int, total: int, fp64: bool) -> tuple[int, str | None]:
    usable = USABLE_SHARE * total
    for n in range(seeds, MIN_SEEDS - 1, -1):
        if needed_bytes(in_bytes, weights, out_bytes, n, fp64) <= usable:
            return n, None
    need = needed_bytes(in_bytes, weights, out_bytes, min(seeds, MIN_SEEDS), fp64)
    return 0, (f"the task needs {need / 1e9:.1f} GB of device memory to score ({in_bytes / 1e9:.2f} GB of inputs, "
               f"{out_bytes / 1e9:.2f} GB of outputs a call, {weights / 1e9:.2f} GB of weights), the device has "
               f"{total / 1e9:.1f} GB; score it on a larger device or with smaller shapes")
