"""Runs a prepared sweep: freeze, recover what a killed run left behind, prune its leaked
containers, then run the pending trials with progress on the terminal."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager

from harnesses.trial import shared_gpu_lock_dir
from kernelarena.logs import get_logger
from orchestrator.harness_runner import HarnessRunner
from orchestrator.ledger import Ledger
from orchestrator.limits import Limits
from orchestrator.planner import plan
from orchestrator.prepare import LEDGER_FILE, SweepPlan, freeze, scoring_devices, sweep_label
from orchestrator.progress import SweepProgress
from orchestrator.sweep import SweepOutcome, SweepRunner, TrialRunner, recover_interrupted
from sandbox import docker_client
from scorer.gpu.freeze import FreezeServer

EXCLUSIVE_TIMING_ENV = "KERNELARENA_EXCLUSIVE_TIMING"

log = get_logger("kernelarena.sweep")


def prune_leaked_sandboxes(spec_backend: str, sweep_label: str) -> None:
    """Containers of a killed run of this sweep are still labelled with it; remove those whose
    owning process is gone (a sweep running beside this one keeps its own)."""
    if spec_backend == "process" or not docker_client.daemon_answers():
        return
    try:
        removed = docker_client.prune(sweep=sweep_label)
    except Exception as exc:  # pruning is hygiene: it must never stop the sweep
        log.warning("sandbox_prune_failed", error=str(exc))
        return
    if removed:
        log.info("sandbox_pruned", sweep=sweep_label, removed=removed)


async def run_sweep(plan_: SweepPlan, runner: TrialRunner | None = None, live: bool | None = None) -> SweepOutcome:
    spec, sweep_dir = plan_.spec, plan_.sweep_dir
    if not plan_.resumed:
        freeze(sweep_dir, spec, plan_.tasks)
    trials = plan(spec, plan_.tasks)
    with Ledger(sweep_dir / LEDGER_FILE) as ledger:
        ledger.add_planned(trials)
        interrupted = recover_interrupted(sweep_dir, ledger)
        if interrupted:
            log.info("sweep_resume_interrupted", trials=[r.trial_id for r in interrupted])
        prune_leaked_sandboxes(spec.sandbox.backend, sweep_label(sweep_dir))
        with SweepProgress(ledger, live=live) as progress:
            if spec.executor == "ray":
                from orchestrator.ray_executor import ray_execution

                async with ray_execution(spec, sweep_label(sweep_dir)) as ray_run:
                    return await SweepRunner(spec, sweep_dir, ledger, trials, runner or ray_run.runner,
                                             ray_run.limits, progress, breaker=ray_run.breaker).run()
            limits = Limits(spec, scoring_devices(spec))
            with exclusive_timing() as freezer:
                runner = runner or HarnessRunner(spec, limits, sweep_label=sweep_label(sweep_dir), freezer=freezer)
                return await SweepRunner(spec, sweep_dir, ledger, trials, runner, limits, progress).run()


@contextmanager
def exclusive_timing() -> Iterator[FreezeServer | None]:
    """The sweep's freeze server: judges timing on a device freeze the agent sandboxes that use it
    (docs/SWEEPS.md). KERNELARENA_EXCLUSIVE_TIMING=0 turns it off; a host where the lock folder
    cannot hold a socket runs without it (judges then only detect the load)."""
    if os.environ.get(EXCLUSIVE_TIMING_ENV, "1") == "0":
        yield None
        return
    try:
        server = FreezeServer(shared_gpu_lock_dir()).start()
    except OSError as exc:
        log.warning("freeze_server_unavailable", error=str(exc))
        yield None
        return
    try:
        yield server
    finally:
        server.close()
        log.info("freeze_server_closed", sections=server.sections)


def run_sweep_blocking(plan_: SweepPlan, live: bool | None = None) -> SweepOutcome:
    """SIGTERM is handled like Ctrl-C: running trials are cancelled, record `interrupted`, and
    stay `running` in the ledger so the next --resume restarts them."""

    async def main() -> SweepOutcome:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        if task is not None:
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
        return await run_sweep(plan_, live=live)

    return asyncio.run(main())
