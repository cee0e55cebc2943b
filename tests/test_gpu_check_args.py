"""scripts/gpu_check.py's options: a preset supplies defaults that flags beside it override, and a
smaller whole budget shortens every part's budget instead of starving the parts that run last."""

from __future__ import annotations

import pytest

from scripts.gpu_check import PRESETS, parse_args


def test_the_preset_alone_runs_its_own_budgets() -> None:
    args, parts = parse_args(["--preset", "check"])
    assert args.budget_s == PRESETS["check"]["budget_s"]
    assert args.parts == PRESETS["check"]["parts"]
    assert parts["suites"] == 175.0 and sum(parts.values()) <= args.budget_s


def test_a_flag_beside_the_preset_wins_and_scales_every_part() -> None:
    args, parts = parse_args(["--preset", "check", "--budget-s", "420", "--workers", "4"])
    assert args.budget_s == 420.0 and args.workers == 4
    assert sum(parts.values()) == pytest.approx(420.0)
    assert parts["suites"] == pytest.approx(175.0 * 420 / 525)
    assert parts["overhead"] == pytest.approx(30.0 * 420 / 525)


def test_budgets_within_the_whole_are_kept() -> None:
    _, parts = parse_args(["--budget-s", "600", "--part-budgets", "suites=100,attacks=50"])
    assert parts == {"suites": 100.0, "attacks": 50.0}
