"""Index outputs (argmax, top-k) are compared modulo ties in the input, and only there."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from scorer.correctness.compare import Rule, compare_outputs
from scorer.correctness.index_ties import settle_ties
from scorer.errors import ScorerUserError
from scorer.tasks.suites import IndexOutput, load_suite


def test_topk_index_into_an_equal_value_is_the_reference_index() -> None:
    x = torch.tensor([[5.0, 1.0, 5.0, 2.0], [0.0, 3.0, 3.0, 9.0]])
    expected = torch.tensor([[0, 2], [3, 1]])
    got = torch.tensor([[2, 0], [3, 2]])  # both ties broken the other way
    assert torch.equal(settle_ties(got, expected, x, -1), expected)


def test_an_index_into_another_value_stays_wrong() -> None:
    x = torch.tensor([[5.0, 1.0, 5.0, 2.0]])
    expected = torch.tensor([[0, 2]])
    got = torch.tensor([[0, 3]])  # 2.0 is not a tie of 5.0
    assert torch.equal(settle_ties(got, expected, x, -1), got)


def test_an_index_outside_the_dimension_is_never_a_tie() -> None:
    x = torch.tensor([[7.0, 7.0, 7.0]])
    expected = torch.tensor([[0]])
    for bad in (3, -1, 1 << 40):
        got = torch.tensor([[bad]])
        assert torch.equal(settle_ties(got, expected, x, -1), got)


def test_argmax_drops_the_dimension_it_indexes() -> None:
    x = torch.tensor([[[1.0, 4.0], [3.0, 4.0], [3.0, 0.0]]])  # (1, 3, 2): argmax over dim 1
    expected = torch.argmax(x, dim=1)  # [[1, 0]]
    got = torch.tensor([[2, 1]])  # the last maximum of each column
    assert torch.equal(settle_ties(got, expected, x, 1), expected)
    assert torch.equal(settle_ties(torch.tensor([[0, 2]]), expected, x, 1), torch.tensor([[0, 2]]))


def test_secret_positions_of_one_output_settle_the_same_way() -> None:
    x = torch.tensor([[5.0, 1.0, 5.0, 2.0], [0.0, 3.0, 3.0, 9.0]])
    positions = torch.tensor([1, 3, 2])  # flat positions in the (2, 2) top-2 output
    expected = torch.tensor([2, 1, 3])
    assert torch.equal(settle_ties(torch.tensor([0, 2, 3]), expected, x, -1, positions, (2, 2)), expected)
    assert torch.equal(settle_ties(torch.tensor([0, 0, 3]), expected, x, -1, positions, (2, 2)),
                       torch.tensor([2, 0, 3]))


def test_compare_outputs_draws_the_inputs_only_for_a_declared_index_output() -> None:
    x = torch.tensor([[5.0, 1.0, 5.0]])
    drawn = []

    def inputs() -> list[torch.Tensor]:
        drawn.append(1)
        return [x]

    values, expected = torch.tensor([[5.0, 5.0]]), torch.tensor([[0, 2]])
    swapped = torch.tensor([[2, 0]])
    declared = Rule(0.0, 0.0, True, index_outputs=(IndexOutput(1, 0, -1),))
    assert compare_outputs([values, expected], [values, expected], declared, inputs).ok and not drawn
    assert compare_outputs([values, swapped], [values, expected], declared, inputs).ok and drawn
    assert not compare_outputs([values, swapped], [values, expected], Rule(0.0, 0.0, True), inputs).ok


@pytest.mark.parametrize("entry", ["[{ output = 0 }]", "[{ output = 0, input = 0, axis = 1 }]",
                                   "[{ output = -1, input = 0 }]", "[{ output = 0, input = true }]", "3"])
def test_a_malformed_declaration_is_a_one_line_error(tmp_path: Path, entry: str) -> None:
    root = _suite(tmp_path, f"index_outputs = {entry}\n")
    with pytest.raises(ScorerUserError, match="argmax_last.*index_outputs|argmax_last"):
        load_suite(root)


_TASK = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.argmax(x, dim=1)


rows = 16
n = 64


def get_inputs():
    # Four distinct values: nearly every row holds its maximum more than once.
    return [torch.randint(0, 4, (rows, n)).float()]


def get_init_inputs():
    return []
'''

_KERNEL = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _argmax_rows(x_ptr, out_ptr, n, LAST: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=float("-inf"))
    m = tl.max(x, axis=0)
    if LAST:
        # the last maximum: another answer, as right as torch's first, wherever the maximum ties
        best = tl.max(tl.where((x == m) & mask, offs, -1), axis=0)
    else:
        # the last element that is not the maximum: wrong
        best = tl.max(tl.where((x != m) & mask, offs, -1), axis=0)
    tl.store(out_ptr + row, best.to(tl.int64))


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty(x.shape[0], dtype=torch.int64, device=x.device)
        _argmax_rows[(x.shape[0],)](x, out, x.shape[1], LAST=LAST, BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
'''


def _suite(tmp_path: Path, declaration: str) -> Path:
    root = tmp_path / "ties"
    root.mkdir(exist_ok=True)
    (root / "argmax_last.py").write_text(_TASK)
    (root / "suite.toml").write_text(
        'name = "ties"\ntargets = ["cpu"]\n[timing]\nwarmup = 1\nrepetitions = 3\n'
        '[tasks.argmax_last]\ncategory = "reduction"\ndtype = "float32"\nexact = true\n'
        "alt_shapes = [{ rows = 3, n = 100 }]\n" + declaration)
    return root


def _score(tmp_path: Path, declaration: str, last: bool):
    from scorer import ScoreOptions, score_kernel

    kernel = tmp_path / "kernel.py"
    kernel.write_text(_KERNEL.replace("LAST=LAST", f"LAST={last}"))
    options = ScoreOptions(device="cpu", seeds=2)
    return score_kernel(load_suite(_suite(tmp_path, declaration)), "argmax_last", kernel, device="cpu", options=options)


def test_a_kernel_breaking_ties_its_own_way_passes_every_stage(tmp_path: Path) -> None:
    """Correctness trials, alternative shape, timed outputs and the judge's batch all compare the
    index output; each must accept the other maximum where the declaration says ties are equal."""
    declared = _score(tmp_path, "index_outputs = [{ output = 0, input = 0, dim = 1 }]\n", last=True)
    assert declared.verdict == "passed", (declared.error, declared.hacks)


def test_without_the_declaration_the_same_kernel_is_wrong(tmp_path: Path) -> None:
    undeclared = _score(tmp_path, "", last=True)
    assert undeclared.verdict != "passed"


def test_a_wrong_index_is_wrong_despite_the_declaration(tmp_path: Path) -> None:
    wrong = _score(tmp_path, "index_outputs = [{ output = 0, input = 0, dim = 1 }]\n", last=False)
    assert wrong.verdict != "passed"
