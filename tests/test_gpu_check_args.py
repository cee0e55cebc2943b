"""scripts/gpu_check.py's options: a preset supplies defaults that flags beside it override, and a
smaller whole budget shortens the parts' budgets, none below what a part needs to start, leaving out
the last parts where they no longer fit."""

from __future__ import annotations

import pytest

from scripts.gpu_check import MIN_PART_S, PRESETS, parse_args


def test_the_preset_alone_runs_its_own_budgets() -> None:
    args, parts = parse_args(["--preset", "check"])
    assert args.budget_s == PRESETS["check"]["budget_s"]
    assert args.parts == PRESETS["check"]["parts"]
    assert parts["suites"] == 175.0 and sum(parts.values()) <= args.budget_s


def test_a_flag_beside_the_preset_wins_and_scales_the_parts() -> None:
    args, parts = parse_args(["--preset", "check", "--budget-s", "420", "--workers", "4"])
    assert args.budget_s == 420.0 and args.workers == 4
    assert sum(parts.values()) <= 420.0
    assert parts["suites"] == pytest.approx(175.0 * 420 / 525)


def test_a_small_budget_leaves_out_the_last_parts_instead_of_starving_all() -> None:
    _, own = parse_args(["--preset", "check"])
    _, parts = parse_args(["--preset", "check", "--budget-s", "300"])
    run = [k for k, v in parts.items() if v > 0]
    assert sum(parts.values()) <= 300.0
    assert all(parts[k] >= min(own[k], MIN_PART_S) for k in run)
    # The order given is the priority: the parts that run come first, the rest are all left out.
    assert run == list(parts)[:len(run)] and 0 < len(run) < len(parts)


def test_budgets_within_the_whole_are_kept() -> None:
    _, parts = parse_args(["--budget-s", "600", "--part-budgets", "suites=100,attacks=50"])
    assert parts == {"suites": 100.0, "attacks": 50.0}


def test_a_malformed_part_budget_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--part-budgets", "suites"])
    assert exit_info.value.code == 2
    assert "give part=seconds" in capsys.readouterr().err
