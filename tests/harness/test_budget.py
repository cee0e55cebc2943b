"""Budget accounting: each limit raises BudgetExhausted with its kind, limit and amount used."""

from __future__ import annotations

import pytest

from harnesses.budget import Budget, BudgetConfig
from harnesses.exits import BudgetExhausted
from harnesses.models.base import Usage


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def exhausted(budget: Budget) -> BudgetExhausted:
    with pytest.raises(BudgetExhausted) as info:
        budget.check()
    return info.value


def test_turn_limit() -> None:
    budget = Budget(BudgetConfig(max_turns=2))
    budget.record_turn(Usage(10, 5))
    budget.check()
    budget.record_turn(Usage(10, 5))
    exit = exhausted(budget)
    assert (exit.kind, exit.limit, exit.used, exit.exit_reason) == ("turns", 2, 2, "budget:turns")


@pytest.mark.parametrize("field,kind", [("max_input_tokens", "input_tokens"), ("max_output_tokens", "output_tokens")])
def test_token_limits(field: str, kind: str) -> None:
    budget = Budget(BudgetConfig(max_turns=None, **{field: 100}))
    budget.record_turn(Usage(60, 60))
    budget.check()
    budget.record_turn(Usage(60, 60))
    exit = exhausted(budget)
    assert (exit.kind, exit.used) == (kind, 120)


def test_wall_time_counts_from_start() -> None:
    clock = FakeClock()
    budget = Budget(BudgetConfig(wall_time_s=10), clock=clock)
    clock.now += 50  # before start(): not counted
    budget.start()
    clock.now += 9.5
    budget.check()
    assert budget.remaining_s() == pytest.approx(0.5)
    clock.now += 1
    assert exhausted(budget).kind == "wall_time"
    assert budget.remaining_s() == 0
    budget.stop()
    clock.now += 100  # scoring time after the agent is done is not the agent's
    assert budget.elapsed_s == pytest.approx(10.5)


def test_dollars_use_the_price_table() -> None:
    # claude-haiku-4-5 is in the built-in table at $1 / $5 per million tokens.
    budget = Budget(BudgetConfig(max_dollars=0.01), "anthropic:claude-haiku-4-5")
    budget.record_turn(Usage(input_tokens=5_000, output_tokens=500))
    assert budget.dollars == pytest.approx(0.0075)
    budget.check()
    budget.record_turn(Usage(input_tokens=5_000, output_tokens=500))
    assert exhausted(budget).kind == "dollars"


def test_unknown_price_leaves_dollars_unknown_and_unenforced() -> None:
    budget = Budget(BudgetConfig(max_dollars=0.01), "scripted:reference")
    budget.record_turn(Usage(10**9, 10**9))
    assert budget.dollars is None
    budget.check()


def test_config_rejects_unknown_fields() -> None:
    with pytest.raises(ValueError):
        BudgetConfig(max_turn=3)


def test_frozen_time_is_left_out_of_wall_time(tmp_path) -> None:
    """A sandbox frozen 40 s of the agent's 70 s (its freeze log, as the sweep's freeze server
    writes it): the budget counts 30 s, and a 60 s wall-time limit is not reached."""
    from scorer.gpu.freeze import frozen_seconds

    clock = FakeClock()
    log = tmp_path / "agent.frozen"
    log.write_text("F 90.0\nT 95.0\nF 110.0\nT 140.0\nF 160.0\n")  # the first freeze began before the agent
    budget = Budget(BudgetConfig(wall_time_s=60), clock=clock)
    budget.exclude_paused(lambda since, until: frozen_seconds(log, since, until))
    budget.start()
    clock.now = 170.0  # 70 s on the wall; frozen 30 s, and 10 s of a freeze still in force
    assert budget.paused_s == pytest.approx(40.0)
    assert budget.elapsed_s == pytest.approx(30.0)
    budget.check()
    budget.stop()
    clock.now = 500.0
    assert budget.elapsed_s == pytest.approx(30.0), "stopped: neither wall time nor freezes count after"
    assert budget.usage()["frozen_s"] == pytest.approx(40.0)


def test_wall_time_limit_still_applies_beside_freezes(tmp_path) -> None:
    clock = FakeClock()
    budget = Budget(BudgetConfig(wall_time_s=60), clock=clock)
    budget.exclude_paused(lambda since, until: 5.0)
    budget.start()
    clock.now = 166.0  # 66 s on the wall, 5 frozen: 61 s counted
    assert exhausted(budget).kind == "wall_time"
