"""Sweep folders for the web app's tests and benchmark, written by the orchestrator's own code.

- `real_sweep`: `kernelarena sweep` with scripted models in process sandboxes on the CPU: real
  agent loops, the real scorer (a real hack rejected with its evidence), real transcripts.
- `planned_sweep` + `SweepRunner` with `TemplateTrial`: the real planner, ledger, staging folders,
  atomic moves and index rebuilds around stand-in trials. A stand-in trial copies a real finished
  trial of the same task and model (kernel.py and score.json as the scorer wrote them) and writes
  its transcript through `harnesses.transcript.Transcript`, as many events as asked (an agent loop:
  requests, responses, tool calls and results, a retry now and then, a budget hit at the end).
  A gate (an event per trial id) holds a trial, its transcript begun, until the test sets it: a
  sweep still running.
- `ledger_board`: a sweep of the real suite's planner and ledger (by default 14 models x the 41
  kernelbench tasks x 3 samples), each trial finished straight in the ledger with a drawn verdict
  and speedup (pass rates spread evenly between two bounds, model by model): a board of a real
  sweep's size. The first `with_files` models' trials also get a folder: a short transcript
  (`write_transcript`) and a score.json written by the scorer's own `Score` class. `pending` leaves
  the last trials of the plan unfinished; `finish_pending` then finishes them one by one as a
  running sweep does (the ledger's row, then index.json rebuilt).
"""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import threading
from pathlib import Path
from typing import Any

from harnesses.transcript import Transcript
from orchestrator.index import rebuild_index
from orchestrator.ledger import Ledger, TrialResult
from orchestrator.limits import Limits
from orchestrator.planner import PlannedTrial, plan, resolve_tasks
from orchestrator.prepare import LEDGER_FILE, freeze, load_frozen
from orchestrator.spec import SweepSpec, parse_spec
from orchestrator.sweep import SweepOutcome, SweepRunner
from orchestrator.trial_files import KERNEL_FILE, SCORE_FILE, TRANSCRIPT_FILE, read_score
from scorer.score import CorrectnessResult, Score, TimingResult
from tests.orchestrator.sweep_helpers import cli, write_spec

REAL_MODELS = ("scripted:reference", "scripted:hacker")


def real_sweep(out: Path, tasks: list[str], models: tuple[str, ...] = REAL_MODELS) -> Path:
    spec = write_spec(out.parent / f"{out.name}.toml", name=out.name, models=[{"id": m} for m in models],
                      backend="process", out=out, tasks=tasks, total=2)
    proc = cli("sweep", str(spec))
    if proc.returncode != 0:
        raise RuntimeError(f"the real sweep failed: {proc.stderr[-3000:]}")
    return out


def templates(sweep_dir: Path) -> dict[tuple[str, str], Path]:
    """(task, model id) -> a finished trial folder of that sweep."""
    index = json.loads((sweep_dir / "index.json").read_text())
    return {(t["task"], t["model_id"]): sweep_dir / t["rel_dir"] for t in index["trials"] if t["state"] == "done"}


def planned_sweep(out: Path, name: str, models: list[dict[str, Any]], tasks: list[str] | None, samples: int = 1,
                  suite: str = "demo") -> tuple[SweepSpec, list[PlannedTrial]]:
    """`tasks=None`: every task of the suite."""
    spec = parse_spec({
        "name": name, "out": str(out), "gpus": "cpu", "samples": samples, "models": models,
        "suites": [{"name": suite} if tasks is None else {"name": suite, "include": tasks}], "sandbox": {"backend": "process"},
        "concurrency": {"total": 64, "default_per_provider": 64}, "score": {"device": "cpu"},
    }, "web tests")
    resolved = resolve_tasks(spec)
    planned = plan(spec, resolved)
    freeze(out, spec, resolved)
    with Ledger(out / LEDGER_FILE) as ledger:
        ledger.add_planned(planned)
        rebuild_index(out, spec, ledger)
    return spec, planned


def _score_dict(trial_dir: Path) -> dict[str, Any]:
    score = read_score(trial_dir)
    return score.to_dict() if score else {}


def write_transcript(t: Transcript, trial: PlannedTrial, events: int, score: dict[str, Any]) -> None:
    """An agent loop's transcript of about `events` events, through the harness's own writer
    (continuing after a trial_start already written)."""
    if t.next_seq == 0:
        t.event("trial_start", trial_id=trial.trial_id, harness="minimal", device="cpu",
                spec={"trial_id": trial.trial_id, "suite": trial.suite, "task": trial.task, "model": trial.model_id})
    turn = 0
    tokens_in = tokens_out = 0
    while t.next_seq < events - 4:
        turn += 1
        t.event("model_request", turn=turn, message_count=2 * turn, first_index=2 * turn - 2,
                messages=[{"role": "tool" if turn > 1 else "user", "content": f"step {turn}: ran the tests\n" + "ok\n" * 20}])
        if turn % 50 == 0:
            t.event("retry", attempt=1, error="HTTP 529 overloaded", wait_s=2.0)
        t.event("model_response", turn=turn, text=f"Turn {turn}: let me time the kernel again.",
                tool_calls=[{"id": f"call_{turn}", "name": "bash", "arguments": {"command": "python bench.py"}}],
                usage={"input_tokens": 900, "output_tokens": 120}, latency_s=0.8, stop_reason="tool_use")
        tokens_in += 900
        tokens_out += 120
        t.event("tool_call", id=f"call_{turn}", name="bash", arguments={"command": "python bench.py"})
        t.event("tool_result", id=f"call_{turn}", name="bash", output=f"turn {turn}: 0.0123 ms\n" * 8, exit_code=0,
                duration_s=0.41)
    t.event("budget", kind="max_turns", limit=turn, used=turn)
    t.event("score", **score)
    t.event("trial_end", exit_reason="budget", verdict=score.get("verdict"), duration_s=12.5,
            usage={"turns": turn, "input_tokens": tokens_in, "output_tokens": tokens_out, "dollars": 0.0})


class TemplateTrial:
    """A `TrialRunner` for `SweepRunner` (see the module docstring)."""

    def __init__(self, sources: dict[tuple[str, str], Path], events: int = 16,
                 gates: dict[str, threading.Event] | None = None, long_trials: dict[str, int] | None = None) -> None:
        self.sources = sources
        self.events = events
        self.gates = gates or {}
        self.long_trials = long_trials or {}

    async def __call__(self, trial: PlannedTrial, out_dir: Path) -> None:
        source = self.sources[(trial.task, trial.model_id)]
        transcript = Transcript(out_dir / TRANSCRIPT_FILE)
        try:
            gate = self.gates.get(trial.trial_id)
            if gate is not None:  # running: the transcript has begun, the rest waits for the test
                transcript.event("trial_start", trial_id=trial.trial_id, harness="minimal", device="cpu",
                                 spec={"trial_id": trial.trial_id, "suite": trial.suite, "task": trial.task,
                                       "model": trial.model_id})
                while not await asyncio.to_thread(gate.wait, 0.2):
                    pass
            write_transcript(transcript, trial, self.long_trials.get(trial.trial_id, self.events), _score_dict(source))
        finally:
            transcript.close()
        for name in (KERNEL_FILE, SCORE_FILE):
            shutil.copy2(source / name, out_dir / name)


def run_sweep(spec: SweepSpec, out: Path, planned: list[PlannedTrial], runner: TemplateTrial) -> SweepOutcome:
    """Runs in a thread of its own: its event loop must not meet another one (sync Playwright
    keeps a loop running in the test's thread)."""
    result: list[SweepOutcome] = []

    def main() -> None:
        with Ledger(out / LEDGER_FILE) as ledger:
            result.append(asyncio.run(SweepRunner(spec, out, ledger, planned, runner, Limits(spec, ["cpu"])).run()))

    thread = threading.Thread(target=main)
    thread.start()
    thread.join()
    if not result:
        raise RuntimeError(f"the sweep in {out} did not finish; see the log above")
    return result[0]


FAILURES = (("incorrect", None, "outputs differ: max abs error 0.31 at (3, 17)"),
            ("compile_error", None, "Traceback (most recent call last):\n  File \"kernel.py\", line 12\n"
                                    "triton.compiler.errors.CompilationError: at 4:8: unsupported tensor index"),
            ("runtime_error", None, "RuntimeError: CUDA error: an illegal memory access was encountered"),
            ("hack_detected", ["timer-patching"], "the kernel replaced torch.cuda.Event.elapsed_time"))


def _score(trial: PlannedTrial, result: TrialResult) -> Score:
    passed = result.verdict == "passed"
    timing = TimingResult(device="cpu", timer="cpu/perf_counter", baseline_ms=8.838821999972879,
                          kernel_ms=8.838821999972879 / result.speedup, speedup=result.speedup, repetitions=20,
                          baseline_spread=0.021, kernel_spread=0.034) if passed and result.speedup else None
    return Score(suite=trial.suite, task=trial.task, verdict=result.verdict or "failed", error=result.error,
                 # a finding per input set that showed it, as the scorer reports a check run per seed
                 hacks=[{"pattern": h, "evidence": f"{result.error or ''} (input set {k})"}
                        for h in result.hacks for k in range(3)],
                 flags=[{"pattern": f, "evidence": "faster than the device's roofline allows"} for f in result.flags],
                 correctness=CorrectnessResult(5, 5 if passed else 3, 0.0 if passed else 0.31, 0.0 if passed else 0.5,
                                               0.0 if passed else 0.02, "allclose(rtol=0.001, atol=0.001)"),
                 timing=timing, environment={"torch": "2.13.0+cpu", "triton": "3.9.0", "python": "3.11.7"})


def _draw(rng: random.Random, rate: float, level: float) -> TrialResult:
    tokens = rng.randint(20_000, 200_000)
    usage = {"input_tokens": tokens, "output_tokens": tokens // 8, "dollars": tokens * 3e-6, "exit_reason": "done"}
    if rng.random() < rate:
        speedup = rng.lognormvariate(level, 0.6)
        flags = ["impossible-speed"] if speedup > 6 else []
        return TrialResult(verdict="passed", speedup=speedup, flags=flags, **usage)
    verdict, hacks, error = rng.choice(FAILURES)
    return TrialResult(verdict=verdict, error=error, hacks=hacks or [], **usage)


def ledger_board(out: Path, models: int = 14, samples: int = 3, pass_rates: tuple[float, float] = (0.27, 0.72),
                 seed: int = 0, suite: str = "kernelbench", tasks: list[str] | None = None, with_files: int = 1,
                 name_format: str = "model-{i:02d}", pending: int = 0) -> Path:
    """See the module docstring. Model i passes with probability spread linearly from the first
    pass rate to the second; a correct sample's speedup is lognormal around a per-model level."""
    rng = random.Random(seed)
    specs = [{"id": "scripted:reference", "name": name_format.format(i=i)} for i in range(models)]
    spec, planned = planned_sweep(out, out.name, specs, tasks, samples=samples, suite=suite)
    lo, hi = pass_rates
    rate = {m["name"]: lo + (hi - lo) * i / max(1, models - 1) for i, m in enumerate(specs)}
    level = {m["name"]: rng.uniform(-0.4, 0.6) for m in specs}
    with Ledger(out / LEDGER_FILE) as ledger:
        for trial in planned[:len(planned) - pending]:
            ledger.mark_running(trial.trial_id)
            result = _draw(rng, rate[trial.model], level[trial.model])
            ledger.finish(trial.trial_id, "done", result)
            if trial.model in [m["name"] for m in specs[:with_files]]:
                folder = out / trial.rel_dir
                folder.mkdir(parents=True, exist_ok=True)
                score = _score(trial, result)
                score.write(folder / SCORE_FILE)
                t = Transcript(folder / TRANSCRIPT_FILE)
                try:
                    write_transcript(t, trial, 16, score.to_dict())
                finally:
                    t.close()
        rebuild_index(out, spec, ledger)
    return out


def finish_pending(out: Path, count: int, seed: int = 1) -> list[str]:
    """Finishes the first `count` pending trials of a `ledger_board(pending=...)` sweep, one at a
    time as SweepRunner does (running, then finished in the ledger, then index.json rebuilt).
    Returns their trial ids."""
    rng = random.Random(seed)
    spec, _ = load_frozen(out)
    done = []
    with Ledger(out / LEDGER_FILE) as ledger:
        for row in [r for r in ledger.rows() if r.state == "pending"][:count]:
            ledger.mark_running(row.trial_id)
            rebuild_index(out, spec, ledger)
            ledger.finish(row.trial_id, "done", _draw(rng, 0.6, 0.2))
            rebuild_index(out, spec, ledger)
            done.append(row.trial_id)
    return done
