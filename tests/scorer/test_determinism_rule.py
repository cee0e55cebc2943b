"""Bitwise non-determinism: rejected by default, flagged when the suite allows float atomics,
and always rejected when the rerun is wrong."""

import torch

from scorer.correctness.compare import Rule
from scorer.correctness.evaluate import ReferenceSet, _extra_trial_findings


class _Ref:
    def __init__(self, expected):
        self.sets = [ReferenceSet(inputs=lambda: [], outputs=[expected], outputs_fp64=None)]
        self.alt = []


def _findings(first, repeat, rule):
    expected = torch.ones(4, 4)
    outputs = {"seed-0": [first], "repeat-0": [repeat]}
    calls = {"seed-0": {"devices": ["cpu"]}, "repeat-0": {"devices": ["cpu"]}}
    return _extra_trial_findings(_Ref(expected), calls, outputs, "cpu", rule)


def test_identical_reruns_give_no_finding():
    x = torch.ones(4, 4)
    assert _findings(x, x.clone(), Rule(1e-3, 1e-3, False)) == []


def test_bitwise_difference_rejected_by_default():
    x = torch.ones(4, 4)
    y = x.clone()
    y[1, 2] += 1e-6
    (f,) = _findings(x, y, Rule(1e-3, 1e-3, False))
    assert f.pattern == "shared-memory-overflow" and f.severity == "reject" and "[1, 2]" in f.evidence


def test_bitwise_difference_inside_tolerance_is_a_flag_when_suite_allows_atomics():
    x = torch.ones(4, 4)
    y = x.clone()
    y[0, 0] += 1e-6
    (f,) = _findings(x, y, Rule(1e-3, 1e-3, False, deterministic=False))
    assert f.severity == "flag" and "within tolerance" in f.evidence


def test_wrong_rerun_is_rejected_even_when_atomics_are_allowed():
    x = torch.ones(4, 4)
    y = x.clone() * 2
    (f,) = _findings(x, y, Rule(1e-3, 1e-3, False, deterministic=False))
    assert f.severity == "reject" and "rerun is wrong" in f.evidence
