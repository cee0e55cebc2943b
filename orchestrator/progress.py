"""Sweep progress on the terminal: a live per-model table on a TTY, one plain line per finished
trial otherwise (CI logs, redirected output)."""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from orchestrator.leaderboard import fmt_speedup
from orchestrator.ledger import Ledger, TrialRow
from orchestrator.planner import PlannedTrial


@dataclass
class _ModelTally:
    planned: int = 0
    done: int = 0
    failed: int = 0
    running: int = 0
    passed: int = 0
    tokens: int = 0
    dollars: float = 0.0


def _fmt_s(seconds: float) -> str:
    seconds = int(max(0, seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class SweepProgress:
    """Implements the sweep's ProgressSink; counts start from the ledger so a resume shows the
    whole sweep, and the ETA uses only trials finished in this run."""

    def __init__(self, ledger: Ledger, console: Console | None = None, live: bool | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.live_enabled = self.console.is_terminal if live is None else live
        self.start = time.monotonic()
        self.finished_this_run = 0
        self.models: dict[str, _ModelTally] = defaultdict(_ModelTally)
        self.paused: dict[str, float] = {}
        for row in ledger.rows():
            tally = self.models[row.model]
            tally.planned += 1
            self._count_final(tally, row)
        self.remaining = sum(t.planned - t.done - t.failed for t in self.models.values())
        self._live: Live | None = None

    @staticmethod
    def _count_final(tally: _ModelTally, row: TrialRow) -> None:
        if row.state in ("done", "failed"):
            tally.tokens += row.input_tokens + row.output_tokens
            tally.dollars += row.dollars
        if row.state == "done":
            tally.done += 1
            tally.passed += row.verdict == "passed"
        elif row.state == "failed":
            tally.failed += 1

    def __enter__(self) -> SweepProgress:
        if self.live_enabled:
            self._live = Live(self._render(), console=self.console, refresh_per_second=2, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self._render())
            self._live.__exit__(None, None, None)
            self._live = None

    def trial_started(self, trial: PlannedTrial) -> None:
        self.models[trial.model].running += 1
        self._refresh()

    def trial_finished(self, trial: PlannedTrial, row: TrialRow, will_retry: bool) -> None:
        tally = self.models[trial.model]
        tally.running -= 1
        if will_retry:
            tally.tokens += row.input_tokens + row.output_tokens
            tally.dollars += row.dollars
        else:
            self._count_final(tally, row)
            self.finished_this_run += 1
            self.remaining -= 1
        if self._live is None:
            what = "deferred" if row.exit_reason == "credentials" else "retrying" if will_retry else row.state
            detail = row.verdict or row.error or ""
            speed = f" x{fmt_speedup(row.speedup)}" if row.speedup is not None else ""
            self.console.print(
                f"[{_fmt_s(time.monotonic() - self.start)}] {what:8} {trial.trial_id}: {detail}{speed}",
                markup=False, highlight=False, soft_wrap=True,
            )
        self._refresh()

    def provider_paused(self, provider: str, pause_s: float, error: str) -> None:
        """One line (also above a live table): a pause with its length, or, for a refused key
        (an endless pause), that the provider is stopped and how to go on."""
        self.paused[provider] = time.monotonic() + pause_s
        if math.isinf(pause_s):
            line = f"provider {provider} stopped: {error}; its trials stay pending for `kernelarena sweep --resume`"
        else:
            line = f"provider {provider} paused for {pause_s:.0f}s after repeated model errors: {error}"
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)
        self._refresh()

    def eta_s(self) -> float | None:
        if not self.finished_this_run:
            return None
        per_trial = (time.monotonic() - self.start) / self.finished_this_run
        return per_trial * self.remaining

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.update(self._render())

    def _render(self) -> Group:
        table = Table(title=None, expand=False)
        for col in ("model", "done", "running", "failed", "pending", "passed", "tokens", "$"):
            table.add_column(col, justify="left" if col == "model" else "right")
        for name, t in sorted(self.models.items()):
            pending = t.planned - t.done - t.failed - t.running
            table.add_row(name, str(t.done), str(t.running), str(t.failed), str(pending), str(t.passed),
                          f"{t.tokens:,}", f"{t.dollars:.2f}")
        eta = self.eta_s()
        now = time.monotonic()
        paused = ", ".join(f"{p} ({'stopped' if math.isinf(left) else f'{left:.0f}s'})"
                           for p, v in self.paused.items() if (left := v - now) > 0)
        head = Text(
            f"elapsed {_fmt_s(now - self.start)}   left {self.remaining} trials"
            f"   ETA {_fmt_s(eta) if eta is not None else '?'}" + (f"   paused: {paused}" if paused else "")
        )
        return Group(head, table)
