"""Index outputs compared modulo ties: top-k, argmax and sort return positions in an input, and where
the input holds the same value twice either position is the right answer.

A task declares which output holds indices into which input, along which dimension of that input
(`index_outputs` in suite.toml, scorer.tasks.suites.IndexOutput). The comparison itself stays
exact or allclose on the indices; only an index that points at a value bit-for-bit equal to the
one the reference's index points at is taken as the reference's. Nothing is forgiven for a near
value: an index into a different value is still wrong, and an index outside the dimension is never
a tie.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def _source_coords(coords: Sequence[torch.Tensor], source: torch.Tensor, dim: int, index: torch.Tensor
                   ) -> tuple[torch.Tensor, ...] | None:
    """Where in `source` each index points: the output's coordinates with the index at `dim`
    (replacing that coordinate when the output keeps the dimension, as top-k does, inserted where
    the output dropped it, as argmax does). None when the shapes do not line up that way."""
    d = dim % source.dim()
    if len(coords) == source.dim():
        return tuple(index if k == d else c for k, c in enumerate(coords))
    if len(coords) == source.dim() - 1:
        return tuple(coords[:d]) + (index,) + tuple(coords[d:])
    return None


def settle_ties(got: torch.Tensor, expected: torch.Tensor, source: torch.Tensor, dim: int,
                positions: torch.Tensor | None = None, shape: Sequence[int] | None = None) -> torch.Tensor:
    """`got` with every index that points at the same value of `source` as the expected index
    replaced by the expected index. `got` and `expected` are whole index outputs, or (with
    `positions`) their values at those flat positions of an output of `shape`."""
    if got.shape != expected.shape or got.dtype != expected.dtype or got.is_floating_point() \
            or got.is_complex() or got.dtype == torch.bool or source.dim() == 0:
        return got
    out_shape = tuple(shape) if shape is not None else tuple(got.shape)
    device = source.device
    flat = positions.to(device) if positions is not None else torch.arange(got.numel(), device=device)
    if flat.numel() != got.numel():
        return got
    coords = torch.unravel_index(flat, out_shape) if out_shape else ()
    size = source.shape[dim % source.dim()]
    kept = list(coords)
    # The output's other coordinates must lie inside the source, or the declaration does not fit.
    probe = _source_coords(kept, source, dim, torch.zeros_like(flat))
    if probe is None or any(bool((c >= n).any()) for c, n in zip(probe, source.shape, strict=True)):
        return got

    def values(index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        index = index.to(device).reshape(-1).long()
        inside = (index >= 0) & (index < size)
        where = _source_coords(kept, source, dim, index.clamp(0, max(size - 1, 0)))
        assert where is not None
        return source[where], inside

    got_values, inside = values(got)
    expected_values, _ = values(expected)
    # Equal values only: -0.0 and 0.0 tie, NaN never does.
    tie = (inside & (got_values == expected_values)).reshape(got.shape).to(got.device)
    return torch.where(tie, expected.to(got.device), got)
