"""Per-trial budgets: turns, tokens, wall time, dollars. Any limit left as None is unlimited.

`Budget` is the running account. The harness calls `check()` before each model query and
`record_turn()` after each answer; `check()` raises `BudgetExhausted` carrying the kind, the limit
and the amount used, which the harness records as a `budget` transcript event.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harnesses.exits import BudgetExhausted
from harnesses.models.pricing import cost
from kernelarena.errors import UserError
from kernelarena.logs import get_logger

log = get_logger(__name__)


class BudgetConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    max_turns: int | None = Field(default=40, ge=1)
    """Model queries allowed in the trial (one query = one turn)."""

    max_input_tokens: int | None = Field(default=None, ge=1)
    """Prompt tokens summed over all queries, as the provider reports them."""

    max_output_tokens: int | None = Field(default=None, ge=1)
    """Completion tokens summed over all queries."""

    wall_time_s: float | None = Field(default=1800.0, gt=0)
    """Seconds from the start of the agent loop; also caps each bash command's timeout."""

    max_dollars: float | None = Field(default=None, gt=0)
    """Spend in US dollars from harnesses.models.pricing; unenforced when the price is unknown."""


class Budget:
    KINDS = ("turns", "input_tokens", "output_tokens", "wall_time", "dollars")

    def __init__(
        self, config: BudgetConfig, model_id: str = "", *, prices_path: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.model_id = model_id
        self.prices_path = prices_path
        self._clock = clock
        self._started: float | None = None
        self._stopped: float | None = None
        self._paused: Callable[[float, float], float] | None = None
        self.turns = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read_tokens = 0
        self.cache_write_tokens = 0
        self.dollars: float | None = 0.0
        self.unpriced: str | None = None
        """The first model id without a known price; from then on dollars are unknown."""

    def start(self) -> None:
        if self._started is None:
            self._started = self._clock()

    def stop(self) -> None:
        """Freeze the clock when the agent is done, so scoring time is not counted as its time."""
        if self._started is not None and self._stopped is None:
            self._stopped = self._clock()

    def exclude_paused(self, paused: Callable[[float, float], float]) -> None:
        """``paused(since, until)``: seconds the agent's sandbox was frozen between two readings of
        the clock (a sweep freezes it while a judge times on its device; scorer/gpu/freeze.py).
        They are not the agent's time, so the wall-time budget leaves them out."""
        self._paused = paused

    @property
    def paused_s(self) -> float:
        if self._started is None or self._paused is None:
            return 0.0
        return self._paused(self._started, self._stopped if self._stopped is not None else self._clock())

    @property
    def elapsed_s(self) -> float:
        if self._started is None:
            return 0.0
        wall = (self._stopped if self._stopped is not None else self._clock()) - self._started
        return max(0.0, wall - self.paused_s)

    def remaining_s(self) -> float | None:
        if self.config.wall_time_s is None:
            return None
        return max(0.0, self.config.wall_time_s - self.elapsed_s)

    def record_turn(self, usage: Any, model_id: str | None = None) -> None:
        """``model_id``: the model that answered, when it is not the trial's own (an agent CLI
        may call a smaller model for side tasks); its price applies."""
        self.turns += 1
        self.input_tokens += int(getattr(usage, "input_tokens", 0) or 0)
        self.output_tokens += int(getattr(usage, "output_tokens", 0) or 0)
        self.cache_read_tokens += int(getattr(usage, "cache_read_tokens", 0) or 0)
        self.cache_write_tokens += int(getattr(usage, "cache_write_tokens", 0) or 0)
        if self.dollars is None:
            return
        priced = model_id or self.model_id
        price = self._price(usage, priced)
        if price is None:
            self.dollars, self.unpriced = None, priced
        else:
            self.dollars += price

    def _price(self, usage: Any, model_id: str) -> float | None:
        try:
            return cost(model_id, usage, prices_path=self.prices_path)
        except (KeyError, ValueError, UserError) as exc:
            log.info("budget.price_unknown", model=model_id, reason=str(exc))
            return None

    def check(self) -> None:
        """Raise BudgetExhausted for the first limit reached, in the order of KINDS."""
        cfg = self.config
        limits: list[tuple[str, float | None, float | None]] = [
            ("turns", cfg.max_turns, self.turns),
            ("input_tokens", cfg.max_input_tokens, self.input_tokens),
            ("output_tokens", cfg.max_output_tokens, self.output_tokens),
            ("wall_time", cfg.wall_time_s, self.elapsed_s),
            ("dollars", cfg.max_dollars, self.dollars),
        ]
        for kind, limit, used in limits:
            if limit is not None and used is not None and used >= limit:
                raise BudgetExhausted(kind, limit, used)

    def usage(self) -> dict[str, Any]:
        used: dict[str, Any] = {
            "turns": self.turns,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "wall_time_s": round(self.elapsed_s, 3),
            "frozen_s": round(self.paused_s, 3),
            "dollars": self.dollars,
        }
        if self.unpriced is not None:
            used["price"] = f"unknown: {self.unpriced} has no price (add it to a price file, see pricing.py)"
        return used
