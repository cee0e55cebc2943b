"""Compares kernel outputs with reference outputs under a suite's correctness rule."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from scorer.correctness.index_ties import settle_ties
from scorer.tasks.suites import IndexOutput

_INT_VIEW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


@dataclass(frozen=True)
class Rule:
    rtol: float
    atol: float
    exact: bool
    deterministic: bool = True
    # Outputs holding indices into an input: compared modulo ties (scorer/correctness/index_ties.py).
    index_outputs: tuple[IndexOutput, ...] = ()

    def describe(self) -> str:
        return "exact" if self.exact else f"allclose(rtol={self.rtol:g}, atol={self.atol:g})"


@dataclass(frozen=True)
class Comparison:
    ok: bool
    reason: str = ""
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    mismatch_fraction: float = 0.0


def _bits(t: torch.Tensor) -> torch.Tensor:
    t = t.contiguous()
    if t.dtype == torch.bool:
        return t
    return t.view(_INT_VIEW[t.element_size()]) if t.is_floating_point() or t.is_complex() else t


def _working(t: torch.Tensor) -> torch.Tensor:
    # Native float32/float64 arithmetic is exact enough for allclose and error figures and
    # avoids a float64 copy of every large output; narrower types are widened.
    if t.dtype in (torch.float32, torch.float64):
        return t
    return t.float() if t.is_floating_point() else t.double()


# Compared in pieces of this many elements: the temporaries of one piece (widened values, the
# difference, the relative error) stay near 1 GB on the device whatever the output's size.
_CHUNK_ELEMENTS = 1 << 26


def _compare_tensor(out: torch.Tensor, exp: torch.Tensor, rule: Rule, where: str) -> Comparison:
    if out.shape != exp.shape:
        return Comparison(False, f"{where}: shape {tuple(out.shape)} != expected {tuple(exp.shape)}",
                          float("inf"), float("inf"), 1.0)
    if out.dtype != exp.dtype:
        return Comparison(False, f"{where}: dtype {out.dtype} != expected {exp.dtype}", float("inf"), float("inf"), 1.0)
    if out.numel() == 0:
        return Comparison(True)
    if out.device != exp.device:
        out = out.to(exp.device)
    if out.is_complex():
        out, exp = torch.view_as_real(out), torch.view_as_real(exp)
    flat_out, flat_exp = out.reshape(-1), exp.reshape(-1)
    pieces = [_piece_stats(flat_out[start:start + _CHUNK_ELEMENTS], flat_exp[start:start + _CHUNK_ELEMENTS], rule)
              for start in range(0, flat_out.numel(), _CHUNK_ELEMENTS)]
    # One read back per output: on a GPU shared with other processes' work each read waits its turn.
    stats = torch.stack(pieces)
    mismatches, n_nan, max_abs, max_rel = torch.cat([stats[:, :2].sum(0), stats[:, 2:].amax(0)]).tolist()
    mismatch_fraction = mismatches / out.numel()
    if mismatches == 0:
        return Comparison(True, "", max_abs, max_rel, 0.0)
    extra = f", {int(n_nan)} NaN in output" if n_nan else ""
    reason = (f"{where}: {mismatch_fraction:.2%} of elements outside {rule.describe()} "
              f"(max abs error {max_abs:.3g}, max rel error {max_rel:.3g}{extra})")
    return Comparison(False, reason, max_abs, max_rel, mismatch_fraction)


def _piece_stats(part_out: torch.Tensor, part_exp: torch.Tensor, rule: Rule) -> torch.Tensor:
    """[elements outside the rule, NaN in the output, max abs error, max rel error] of one piece,
    left on its device."""
    o, e = _working(part_out), _working(part_exp)
    if rule.exact:
        mismatches = (_bits(part_out) != _bits(part_exp)).sum()
    else:
        mismatches = part_out.numel() - torch.isclose(o, e, rtol=rule.rtol, atol=rule.atol, equal_nan=True).sum()
    abs_err, rel_err = _errors(o, e, rule.atol)
    return torch.stack([mismatches.double(), torch.isnan(o).sum().double(), abs_err.double(), rel_err.double()])


def _errors(o: torch.Tensor, e: torch.Tensor, atol: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Max absolute error, and max relative error taken against max(|expected|, atol) so that
    near-zero expected values do not turn a negligible difference into an astronomic ratio."""
    diff = (o - e).abs()
    finite = torch.isfinite(diff)
    # A non-finite difference is fine only where both sides hold the same Inf or both NaN.
    same = (o == e) | (torch.isnan(o) & torch.isnan(e))
    unexplained = (~finite & ~same).any()
    diff = torch.where(finite, diff, torch.zeros((), dtype=diff.dtype, device=diff.device))
    floor = atol if atol > 0 else torch.finfo(diff.dtype).tiny
    rel = diff / e.abs().nan_to_num(posinf=0.0).clamp_min(floor)
    inf = torch.full((), float("inf"), dtype=diff.dtype, device=diff.device)
    return torch.where(unexplained, inf, diff.max()), torch.where(unexplained, inf, rel.max())


def compare_outputs(outputs: Sequence[torch.Tensor], expected: Sequence[torch.Tensor], rule: Rule,
                    inputs: Callable[[], Sequence[Any]] | None = None) -> Comparison:
    """`inputs` draws the inputs these outputs were computed from again; it is called only when an
    index output the rule names differs, to tell a tie from a wrong index."""
    if len(outputs) != len(expected):
        return Comparison(False, f"{len(outputs)} outputs, expected {len(expected)}", float("inf"), float("inf"), 1.0)
    results = [_compare_tensor(o, e, rule, f"output {i}") for i, (o, e) in enumerate(zip(outputs, expected, strict=True))]
    if inputs is not None and any(not r.ok for r in results):
        results = _with_ties_settled(list(outputs), expected, rule, inputs, results)
    bad = [r for r in results if not r.ok]
    return Comparison(
        ok=not bad,
        reason="; ".join(r.reason for r in bad),
        max_abs_error=max((r.max_abs_error for r in results), default=0.0),
        max_rel_error=max((r.max_rel_error for r in results), default=0.0),
        mismatch_fraction=max((r.mismatch_fraction for r in results), default=0.0),
    )


def _with_ties_settled(outputs: list[torch.Tensor], expected: Sequence[torch.Tensor], rule: Rule,
                       inputs: Callable[[], Sequence[Any]], results: list[Comparison]) -> list[Comparison]:
    declared = [io for io in rule.index_outputs if io.output < len(results) and not results[io.output].ok]
    if not declared:
        return results
    args = list(inputs())
    for io in declared:
        source = args[io.input] if io.input < len(args) else None
        got, exp = outputs[io.output], expected[io.output]
        if isinstance(source, torch.Tensor) and isinstance(got, torch.Tensor):
            settled = settle_ties(got, exp, source.to(exp.device), io.dim)
            results[io.output] = _compare_tensor(settled, exp, rule, f"output {io.output}")
    return results


def first_difference(a: torch.Tensor, b: torch.Tensor) -> tuple[float, tuple[int, ...]] | None:
    """Largest bitwise difference between two same-shaped outputs (None when bit-identical)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return float("inf"), ()
    if a.device != b.device:
        a = a.to(b.device)
    differ = _bits(a) != _bits(b)
    if not bool(differ.any()):
        return None
    # Only where the bits differ, so a full float64 copy of a large output is never made.
    where = differ.reshape(-1).nonzero().reshape(-1)[: 1 << 24]
    diff = (a.reshape(-1)[where].double() - b.reshape(-1)[where].double()).abs().nan_to_num(nan=float("inf"))
    flat = int(where[int(diff.argmax())])
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), a.shape)) if a.dim() else ()
    return float(diff.max()), index
