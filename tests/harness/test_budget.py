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
