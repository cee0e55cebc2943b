"""Runs a planned sweep: schedules trials under the limits, records each in the ledger, moves
finished trial folders into place and rebuilds the index.

A trial is written into `.staging/` and moved into `solutions/...` with one `os.replace` only once
run_trial returned, so a trial folder in place is complete or absent. A failing trial never stops
the sweep: it is retried up to `failure.max_attempts`, then recorded as failed.
"""

from __future__ import annotations

import asyncio
import math
import os
import shutil
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from harnesses.exits import CredentialsRejected
from harnesses.models.base import ModelError
from kernelarena.errors import UserError
from kernelarena.logs import get_logger
from orchestrator.index import rebuild_index
from orchestrator.ledger import Ledger, TrialResult, TrialRow
from orchestrator.limits import CircuitBreaker
from orchestrator.planner import PlannedTrial
from orchestrator.spec import SweepSpec
from orchestrator.trial_files import summarize_trial

log = get_logger("kernelarena.sweep")

STAGING_DIR = ".staging"
ATTIC_DIR = ".interrupted"

TrialRunner = Callable[[PlannedTrial, Path], Awaitable[None]]
"""Runs one trial, writing kernel.py, transcript.jsonl and score.json into the given folder.
Raises only when the harness or sandbox itself broke (a bad kernel is a verdict, not an error)."""


class ProgressSink(Protocol):
    def trial_started(self, trial: PlannedTrial) -> None: ...
    def trial_finished(self, trial: PlannedTrial, row: TrialRow, will_retry: bool) -> None: ...
    def provider_paused(self, provider: str, pause_s: float, error: str) -> None: ...


class AgentSlots(Protocol):
    """Where trials take their concurrency slots: `Limits`, or the Ray executor's actor."""

    def agent_slot(self, provider: str, model: str) -> AbstractAsyncContextManager[None]: ...


class ProviderBreaker(Protocol):
    """Pauses a failing provider: `CircuitBreaker`, or the Ray executor's actor."""

    async def wait_ready(self, provider: str) -> bool: ...
    def success(self, provider: str) -> None: ...
    def failure(self, provider: str, error: str, healable: bool = True) -> float: ...


class NullProgress:
    def trial_started(self, trial: PlannedTrial) -> None:
        return None

    def trial_finished(self, trial: PlannedTrial, row: TrialRow, will_retry: bool) -> None:
        return None

    def provider_paused(self, provider: str, pause_s: float, error: str) -> None:
        return None


@dataclass
class SweepOutcome:
    counts: dict[str, int]
    elapsed_s: float
    paused_providers: list[str] = field(default_factory=list)


def _folder_name(trial_id: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in trial_id)


def move_aside(sweep_dir: Path, rel_dir: str, reason: str) -> Path | None:
    """Keep a partial or superseded trial folder for audit instead of deleting it."""
    src = sweep_dir / rel_dir
    if not src.exists():
        return None
    dest = sweep_dir / ATTIC_DIR / f"{_folder_name(rel_dir)}-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.replace(src, dest)
    log.info("trial_folder_moved_aside", src=str(src), dest=str(dest), reason=reason)
    return dest


def recover_interrupted(sweep_dir: Path, ledger: Ledger) -> list[TrialRow]:
    """Return trials a killed sweep left running to pending, moving their partial folders aside."""
    interrupted = ledger.reset_interrupted()
    for row in interrupted:
        move_aside(sweep_dir, row.rel_dir, "interrupted")
    staging = sweep_dir / STAGING_DIR
    if staging.exists():
        for leftover in staging.iterdir():
            move_aside(sweep_dir, str(leftover.relative_to(sweep_dir)), "interrupted staging")
    return interrupted


class SweepRunner:
    def __init__(
        self,
        spec: SweepSpec,
        sweep_dir: Path,
        ledger: Ledger,
        trials: list[PlannedTrial],
        runner: TrialRunner,
        limits: AgentSlots,
        progress: ProgressSink | None = None,
        breaker: ProviderBreaker | None = None,
    ) -> None:
        self.spec = spec
        self.sweep_dir = sweep_dir
        self.ledger = ledger
        self.trials = {t.trial_id: t for t in trials}
        self.runner = runner
        self.limits = limits
        self.progress = progress or NullProgress()
        self.breaker: ProviderBreaker = breaker or CircuitBreaker(
            threshold=spec.failure.consecutive_to_pause,
            pause_s=spec.failure.pause_s,
            max_pause_s=spec.failure.max_pause_s,
        )
        self._paused: set[str] = set()
        self._stopped: set[str] = set()

    async def run(self) -> SweepOutcome:
        start = time.monotonic()
        self.ledger.retry_failed(self.spec.failure.max_attempts)
        pending = [self.trials[r.trial_id] for r in self.ledger.rows("pending") if r.trial_id in self.trials]
        rebuild_index(self.sweep_dir, self.spec, self.ledger)
        log.info("sweep_start", pending=len(pending), total=len(self.trials))
        await asyncio.gather(*(self._run_trial(t) for t in pending))
        staging = self.sweep_dir / STAGING_DIR
        if staging.is_dir() and not any(staging.iterdir()):
            staging.rmdir()
        rebuild_index(self.sweep_dir, self.spec, self.ledger)
        counts = self.ledger.counts()
        log.info("sweep_end", elapsed_s=round(time.monotonic() - start, 2), **counts)
        return SweepOutcome(counts=counts, elapsed_s=time.monotonic() - start, paused_providers=sorted(self._paused))

    async def _run_trial(self, trial: PlannedTrial) -> None:
        while True:
            if not await self.breaker.wait_ready(trial.provider):
                return  # the provider refused the key: the trial stays pending for a --resume
            async with self.limits.agent_slot(trial.provider, trial.model):
                if trial.provider in self._stopped:  # stopped while this trial waited for a slot
                    return
                attempt = self.ledger.mark_running(trial.trial_id)
                self.progress.trial_started(trial)
                staging = self.sweep_dir / STAGING_DIR / f"{_folder_name(trial.trial_id)}-{attempt}"
                shutil.rmtree(staging, ignore_errors=True)
                staging.mkdir(parents=True)
                result, model_error = await self._attempt(trial, staging)
            if result.exit_reason == CredentialsRejected.exit_reason:
                self._stop_provider(trial, staging, result)
                return
            retry = result.verdict is None and attempt < self.spec.failure.max_attempts
            if retry:
                move_aside(self.sweep_dir, str(staging.relative_to(self.sweep_dir)), "failed attempt")
                self.ledger.finish(trial.trial_id, "pending", result)
            else:
                self._put_in_place(trial, staging)
                self.ledger.finish(trial.trial_id, "failed" if result.verdict is None else "done", result)
            if model_error:
                pause = self.breaker.failure(trial.provider, result.error or "model error")
                if pause:
                    self._paused.add(trial.provider)
                    self.progress.provider_paused(trial.provider, pause, result.error or "")
            elif result.verdict is not None:
                self.breaker.success(trial.provider)
            row = self.ledger.row(trial.trial_id)
            log.info("trial_end", trial=trial.trial_id, state=row.state, attempt=attempt,
                     verdict=row.verdict, speedup=row.speedup, error=row.error)
            rebuild_index(self.sweep_dir, self.spec, self.ledger)
            self.progress.trial_finished(trial, row, will_retry=retry)
            if not retry:
                return

    def _stop_provider(self, trial: PlannedTrial, staging: Path, result: TrialResult) -> None:
        """A refused key fails every trial of the provider the same way, in seconds: the trial
        goes back to pending (its attempt kept aside for audit), the provider stops for the rest
        of this sweep, and a --resume with a valid key runs what is left."""
        move_aside(self.sweep_dir, str(staging.relative_to(self.sweep_dir)), "credentials refused")
        result.verdict = None
        self.ledger.finish(trial.trial_id, "pending", result)
        error = result.error or "the provider refused the key"
        if trial.provider not in self._stopped:
            self._stopped.add(trial.provider)
            self._paused.add(trial.provider)
            self.breaker.failure(trial.provider, error, healable=False)
            self.progress.provider_paused(trial.provider, math.inf, error)
        row = self.ledger.row(trial.trial_id)
        log.info("trial_end", trial=trial.trial_id, state=row.state, exit_reason=row.exit_reason, error=row.error)
        rebuild_index(self.sweep_dir, self.spec, self.ledger)
        self.progress.trial_finished(trial, row, will_retry=True)

    async def _attempt(self, trial: PlannedTrial, staging: Path) -> tuple[TrialResult, bool]:
        """Run once; returns the result and whether a model error (not the kernel) ended it.
        A trial without a verdict is a failed attempt."""
        try:
            await self.runner(trial, staging)
        except (asyncio.CancelledError, UserError):
            # A user error (a missing docker image, a bad option) would fail every trial the
            # same way: stop with its one-line fix; the trial stays `running`, so --resume redoes it.
            raise
        except Exception as exc:  # one broken trial must never stop the sweep
            log.exception("trial_crashed", trial=trial.trial_id)
            result = summarize_trial(staging)
            result.verdict = None
            result.error = f"{type(exc).__name__}: {exc}"[:500]
            return result, is_model_error(exc)
        result = summarize_trial(staging)
        if result.exit_reason == "error":
            # The model client gave up; the trial's kernel (if any) was still scored, but the
            # result says nothing about the model's skill, so it is a failed attempt.
            result.verdict = None
            return result, True
        return result, False

    def _put_in_place(self, trial: PlannedTrial, staging: Path) -> None:
        final = self.sweep_dir / trial.rel_dir
        move_aside(self.sweep_dir, trial.rel_dir, "superseded")
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging, final)


def is_model_error(exc: BaseException) -> bool:
    """run_trial wraps failures (TrialBroken); the provider is to blame if a ModelError is the cause."""
    return any(isinstance(e, ModelError) for e in _chain(exc))


def _chain(exc: BaseException | None) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen
