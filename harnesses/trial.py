"""One trial end to end: agent sandbox -> harness -> kernel.py out -> fresh scoring sandbox.

`run_trial` writes ``out_dir/{transcript.jsonl, kernel.py, score.json}``. A model that fails or
a kernel that fails is an outcome (a verdict, an exit reason), never an exception. A broken
environment (a sandbox that cannot start, a harness that crashes) is recorded in the transcript
and then raised as `TrialBroken`. Ctrl-C / SIGTERM cancel the task: the sandboxes close in their
``finally`` and trial_end records ``interrupted: true`` before the cancellation propagates.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import platform
import shlex
import tempfile
import time
import traceback
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

import kernelarena
from harnesses.base import KERNEL_FILE, PROMPT_FILE, REFERENCE_FILE, Harness, HarnessResult, TrialContext
from harnesses.budget import Budget, BudgetConfig
from harnesses.models import create_model
from harnesses.models.base import ModelClient, TaskContext
from harnesses.prompts import PromptTemplate, load_prompt
from harnesses.registry import get_harness
from harnesses.transcript import Transcript, secret_env_values
from kernelarena.errors import UserError
from kernelarena.files import write_atomic
from kernelarena.logs import get_logger
from sandbox.base import Sandbox, SandboxError
from sandbox.config import Mount, SandboxConfig
from sandbox.open import open_sandbox, resolve_backend
from scorer.errors import SCORER_BROKE
from scorer.gpu.freeze import ALL_DEVICES, CPU_DEVICE, FreezeServer
from scorer.gpu.lock import LOCK_DIR_ENV
from scorer.score import Score
from scorer.tasks.suites import Suite, Task, load_suite

log = get_logger(__name__)

TRANSCRIPT_FILE = "transcript.jsonl"
SCORE_FILE = "score.json"
SUITE_DIR = "suite"
# Extra time granted to a harness past its wall-time budget before the trial cancels it; the
# harness should have stopped itself by then, this only guards against one that does not.
HARNESS_GRACE_S = 60.0


ScoreSlot = Callable[[], AbstractAsyncContextManager[str]]


class TrialBroken(RuntimeError):
    """The environment broke (sandbox, harness crash), not the model or the kernel; the
    transcript holds the details. A sweep may retry the trial."""


class TrialSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    trial_id: str
    """Stable id, conventionally `suite/task/model/sample`."""
    suite: str
    """Suite name or folder."""
    task: str
    """Task id within the suite."""
    model: str
    """Model id `provider:name` (`scripted:reference`, `replay:PATH`, `openai:gpt-5`, ...)."""
    model_options: dict[str, Any] = {}
    """Keyword options for `create_model` (base_url, temperature, ...)."""
    harness: str = "minimal"
    """Registered harness name (entry-point group kernelarena.harnesses)."""
    harness_options: dict[str, Any] = {}
    """Keyword options for the harness's constructor."""
    sandbox: SandboxConfig = SandboxConfig()
    """Config of the agent sandbox; the scoring sandbox is a fresh one made from it."""
    budget: BudgetConfig = BudgetConfig()
    """Turns, tokens, wall time and dollars the agent may use."""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """Where the kernel is scored (and what the prompt names as the target)."""
    sample: int = Field(default=0, ge=0)
    """Sample index among repeated trials of the same model and task."""
    score_options: dict[str, Any] = {}
    """Extra flags for `python -m scorer score`, e.g. {"repetitions": 5} -> --repetitions 5;
    True -> a bare flag."""
    score_timeout_s: float = Field(default=3600.0, gt=0)
    """Host-side limit for the whole scoring command (the scorer has its own per-stage limits)."""
    score_memory: str = "20g"
    """Memory limit of the scoring sandbox. Above 16g because the scorer sets its CPU kernel
    worker's RLIMIT_AS to 16 GiB and cannot raise a lower limit the sandbox already set."""


class TrialOutcome(BaseModel):
    """What `kernelarena run` prints and a sweep records; the files in out_dir are the truth."""

    trial_id: str
    verdict: str
    speedup: float | None = None
    exit_reason: str
    hacks: list[str] = []
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    dollars: float | None = None
    duration_s: float = 0.0
    error: str | None = None
    """The score's error (why the kernel failed, or why scoring failed)."""
    out_dir: Path
    transcript_path: Path
    score_path: Path
    kernel_path: Path | None = None


def resolve_auto_device(device: str) -> str:
    if device != "auto":
        return device
    import torch  # here, not at the top: only "auto" pays for importing torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def describe_device(device: str) -> tuple[str, str]:
    """(device line, notes) for the prompt."""
    if device == "cuda":
        import torch

        name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "a CUDA GPU"
        return f"{name} (CUDA)", ""
    return (
        "CPU (no GPU here)",
        "- There is no GPU in this environment: Triton kernels run in the Triton interpreter "
        "(`TRITON_INTERPRET=1` is set), so test with small sizes.",
    )


def render_prompt(template: PromptTemplate, harness: Harness, suite: Suite, task: Task, device: str, workdir: str) -> str:
    device_line, notes = describe_device(device)
    values: dict[str, Any] = {
        "device": device_line,
        "device_notes": notes,
        "task_id": task.id,
        "suite": suite.name,
        "category_line": f" ({task.category})" if task.category else "",
        "workdir": workdir,
        "reference_file": REFERENCE_FILE,
        "reference_source": task.source().rstrip("\n"),
        "rtol": task.tolerance.rtol,
        "atol": task.tolerance.atol,
    }
    values.update(harness.prompt_values())
    return template.render(**values)


def _sandbox_config(base: SandboxConfig, device: str, trial_id: str, role: str) -> SandboxConfig:
    env = dict(base.env)
    if device == "cpu":
        env.setdefault("TRITON_INTERPRET", "1")
    gpus = base.gpus
    if device == "cpu":
        gpus = "none"
    elif gpus == "none":
        gpus = "all"
    labels = {**base.labels, "kernelarena.trial": trial_id, "kernelarena.role": role}
    mounts = list(base.mounts)
    if role == "scorer":
        # The scorer's per-GPU timing lock is a file lock: every scoring sandbox on this host
        # must see the same folder, or concurrent trials would time on one GPU at once. The
        # sweep's freeze servers listen there too (on a CPU as well).
        lock_dir = shared_gpu_lock_dir()
        mounts.append(Mount(host=lock_dir, target=GPU_LOCK_TARGET, read_only=False))
        env[LOCK_DIR_ENV] = GPU_LOCK_TARGET if resolve_backend_name(base) == "docker" else str(lock_dir)
    return base.model_copy(update={"env": env, "gpus": gpus, "labels": labels, "mounts": mounts,
                                   "nested_wall": role == "scorer"})


GPU_LOCK_TARGET = "/run/kernelarena-gpu-locks"


def shared_gpu_lock_dir() -> Path:
    path = Path(os.environ.get(LOCK_DIR_ENV) or Path(tempfile.gettempdir()) / "kernelarena-gpu-locks")
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o1777)  # the sandbox user (uid 1000) takes the lock too
    return path


def resolve_backend_name(cfg: SandboxConfig) -> str:
    return resolve_backend(cfg.backend)


async def run_trial(spec: TrialSpec, out_dir: Path, *, score_slot: ScoreSlot | None = None,
                    freezer: FreezeServer | None = None) -> TrialOutcome:
    """``score_slot``, when given, is entered around scoring only and yields the device to score
    on (``"cpu"`` or ``"cuda:N"``), so a sweep holds a GPU exclusively while timing, not while
    the agent thinks. ``freezer``: the sweep's freeze server; the agent sandbox is registered
    with it under the devices it uses, so judges timing there freeze it (scorer/gpu/freeze.py)."""
    started = time.monotonic()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # Everything that can be wrong with the user's input fails here, before a sandbox starts.
    suite = load_suite(spec.suite)
    task = suite.task(spec.task)
    device = resolve_auto_device(spec.device)
    harness = get_harness(spec.harness, **spec.harness_options)
    harness.check_model(spec.model)
    template = load_prompt(harness.prompt_template)
    model = create_model(spec.model, task=TaskContext(suite=suite, task=task), **spec.model_options)
    budget = Budget(spec.budget, spec.model, prices_path=spec.model_options.get("prices_path"))
    transcript = Transcript(out_dir / TRANSCRIPT_FILE, extra_secrets=secret_env_values(spec.sandbox.env))
    # `error` is what went wrong with the trial itself; the kernel's own error is in the score.
    exit_reason, score, error, interrupted = "error", None, None, False
    try:
        transcript.event(
            "trial_start",
            trial_id=spec.trial_id,
            spec=spec,
            device=device,
            harness=harness.name,
            prompt=template.record(),
            task={"id": task.id, "file": task.path.name, "sha256": hashlib.sha256(task.path.read_bytes()).hexdigest()},
            versions={"kernelarena": kernelarena.__version__, "python": platform.python_version()},
        )
        model.on_retry = lambda info: transcript.event("retry", **info)
        result = await _run_agent(spec, harness, model, template, suite, task, device, transcript, budget, out_dir,
                                  freezer)
        exit_reason = result.exit_reason
        score = await _score(spec, suite, task, device, out_dir, transcript, score_slot)
    except asyncio.CancelledError:
        exit_reason, interrupted, error = "interrupted", True, "interrupted (Ctrl-C or SIGTERM)"
        raise
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        try:
            transcript.event(
                "trial_end",
                exit_reason=exit_reason,
                verdict=score.verdict if score else None,
                speedup=score.speedup if score else None,
                usage=budget.usage(),
                duration_s=round(time.monotonic() - started, 3),
                interrupted=interrupted,
                error=error,
            )
        finally:
            transcript.close()
            await _close_model(model)
    kernel_out = out_dir / KERNEL_FILE
    return TrialOutcome(
        trial_id=spec.trial_id,
        verdict=score.verdict,
        speedup=score.speedup,
        exit_reason=exit_reason,
        hacks=[str(h.get("pattern", "")) for h in score.hacks],
        turns=budget.turns,
        input_tokens=budget.input_tokens,
        output_tokens=budget.output_tokens,
        dollars=budget.dollars,
        duration_s=round(time.monotonic() - started, 3),
        error=score.error,
        out_dir=out_dir,
        transcript_path=out_dir / TRANSCRIPT_FILE,
        score_path=out_dir / SCORE_FILE,
        kernel_path=kernel_out if kernel_out.is_file() else None,
    )


async def _run_agent(
    spec: TrialSpec, harness: Harness, model: ModelClient, template: PromptTemplate, suite: Suite, task: Task,
    device: str, transcript: Transcript, budget: Budget, out_dir: Path, freezer: FreezeServer | None = None,
) -> HarnessResult:
    cfg = _sandbox_config(spec.sandbox, device, spec.trial_id, "agent")
    try:
        async with harness.agent_sandbox(cfg) as cfg, open_sandbox(cfg) as sb, \
                _frozen_while_timing(freezer, sb, cfg, device, spec.trial_id, budget, transcript):
            transcript.event("harness_event", kind="sandbox_opened", role="agent", workdir=sb.workdir, info=sb.info.to_dict())
            prompt = render_prompt(template, harness, suite, task, device, sb.workdir)
            await sb.write_file(REFERENCE_FILE, task.source())
            await sb.write_file(PROMPT_FILE, prompt)
            ctx = TrialContext(
                trial_id=spec.trial_id, suite=suite, task=task, model=model, sandbox=sb,
                transcript=transcript, budget=budget, prompt=prompt, device=device,
                options=dict(spec.harness_options), out_dir=out_dir,
            )
            result = await _run_harness(harness, ctx)
            transcript.event("harness_event", kind="harness_exit", exit_reason=result.exit_reason, detail=result.detail)
            await _collect_kernel(sb, result.kernel_path, out_dir, transcript)
            return result
    except SandboxError as exc:
        transcript.event("error", source="agent_sandbox", message=str(exc))
        if isinstance(exc, UserError):  # e.g. no daemon or no image: the user must act
            raise
        raise TrialBroken(f"agent sandbox broke: {exc}") from exc


def agent_devices(cfg: SandboxConfig, device: str) -> list[str]:
    """The lock keys of the devices an agent sandbox uses: the CPU, its GPUs' UUIDs, or all."""
    if device == "cpu" or cfg.gpus == "none":
        return [CPU_DEVICE]
    if cfg.gpus == "all":
        return [ALL_DEVICES]
    try:
        from scorer.gpu.lock import device_lock_key

        return [device_lock_key(f"cuda:{i}") or ALL_DEVICES for i in cfg.gpus]
    except Exception:  # no CUDA in this process: freeze it for every device rather than none
        return [ALL_DEVICES]


@asynccontextmanager
async def _frozen_while_timing(freezer: FreezeServer | None, sb: Sandbox, cfg: SandboxConfig, device: str,
                               trial_id: str, budget: Budget, transcript: Transcript) -> Any:
    """Registers the agent sandbox with the sweep's freeze server for as long as it is open;
    frozen time is left out of the agent's wall-time budget. Thawed and unregistered before the
    sandbox closes."""
    cgroup = getattr(sb, "freezer_cgroup", lambda: None)()
    if freezer is None or cgroup is None:
        yield
        return
    reg = freezer.register(f"{trial_id.replace('/', '_')}-{os.getpid()}-{id(sb):x}", cgroup,
                           agent_devices(cfg, device), trial_id)
    budget.exclude_paused(lambda since, until: reg.frozen_s(since, until))
    try:
        yield
    finally:
        frozen = freezer.unregister(reg)
        transcript.event("harness_event", kind="agent_frozen", seconds=round(frozen, 3), devices=reg.devices)


async def _run_harness(harness: Harness, ctx: TrialContext) -> HarnessResult:
    wall = ctx.budget.config.wall_time_s
    ctx.budget.start()
    try:
        if wall is None:
            return await harness.run(ctx)
        return await _within_budget(harness.run(ctx), ctx.budget, wall + HARNESS_GRACE_S)
    except TimeoutError:
        # The harness overran its budget without stopping itself; the trial enforces it.
        ctx.transcript.event("budget", kind="wall_time", limit=wall, used=round(ctx.budget.elapsed_s, 3), enforced_by="trial")
        return HarnessResult(exit_reason="budget:wall_time", detail="cancelled by run_trial")
    except (SandboxError, UserError):
        raise
    except Exception as exc:
        ctx.transcript.event("error", source="harness", message=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
        raise TrialBroken(f"harness '{harness.name}' crashed: {type(exc).__name__}: {exc}") from exc
    finally:
        ctx.budget.stop()


async def _within_budget(work: Any, budget: Budget, limit_s: float) -> HarnessResult:
    """Awaits the harness until the budget's elapsed time (frozen time left out) passes limit_s."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=max(0.05, limit_s - budget.elapsed_s))
            if done:
                return task.result()
            if budget.elapsed_s >= limit_s:
                raise TimeoutError
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def _collect_kernel(sb: Sandbox, kernel_path: str, out_dir: Path, transcript: Transcript) -> None:
    present = await sb.exec(["test", "-f", kernel_path], timeout=30)
    if present.exit_code != 0:
        transcript.event("harness_event", kind="kernel_missing", path=kernel_path)
        return
    data = await sb.read_file(kernel_path)
    write_atomic(out_dir / KERNEL_FILE, data)
    transcript.event(
        "harness_event", kind="kernel_collected", path=kernel_path, bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )


async def _score(
    spec: TrialSpec, suite: Suite, task: Task, device: str, out_dir: Path, transcript: Transcript,
    score_slot: ScoreSlot | None,
) -> Score:
    kernel = out_dir / KERNEL_FILE
    if not kernel.is_file():
        score = Score(suite=suite.name, task=task.id, verdict="no_kernel", error="the agent did not write kernel.py")
    elif score_slot is None:
        score = await score_in_sandbox(spec, suite, task, device, kernel, transcript)
    else:
        async with score_slot() as slot:
            transcript.event("harness_event", kind="score_slot", device=slot)
            pinned = spec
            kind, _, index = slot.partition(":")
            if kind == "cuda" and index.isdigit():
                pinned = spec.model_copy(update={"sandbox": spec.sandbox.model_copy(update={"gpus": [int(index)]})})
            score = await score_in_sandbox(pinned, suite, task, kind, kernel, transcript)
    score.write(out_dir / SCORE_FILE)
    transcript.event("score", **score.to_dict())
    return score


# A scorer that says it broke (exit 1, "scorer broke: ...") failed for a reason that is not the
# kernel's: a GPU whose memory other processes crowded (scorer/gpu/crowding.py), a reference worker
# slowed or stopped from outside. Scoring is cheap beside the agent's loop that made the kernel, so
# the same kernel.py is scored again in a fresh sandbox after each of these waits.
SCORER_RETRY_WAITS_S: tuple[float, ...] = (30.0, 120.0)


async def score_in_sandbox(spec: TrialSpec, suite: Suite, task: Task, device: str, kernel: Path, transcript: Transcript) -> Score:
    """Score in a FRESH sandbox holding only the suite's task files and kernel.py. A scorer that
    broke is tried again (SCORER_RETRY_WAITS_S); a broken scorer or sandbox still broken after
    that becomes a runtime_error score with the reason, never a crash."""
    waits = list(SCORER_RETRY_WAITS_S)
    while True:
        try:
            return await _score_once(spec, suite, task, device, kernel, transcript)
        except _ScorerBroke as exc:
            if not waits:
                return _scoring_failed(spec, suite, task, transcript, exc)
            wait_s = waits.pop(0)
            transcript.event("error", source="scorer", message=f"scoring failed: {exc}"[:4000], retry_in_s=wait_s)
            log.warning("trial.scorer_broke_retrying", trial=spec.trial_id, wait_s=wait_s, error=str(exc)[:300])
            await asyncio.sleep(wait_s)
        except (SandboxError, _ScoringFailed, ValueError, TypeError, FileNotFoundError) as exc:
            return _scoring_failed(spec, suite, task, transcript, exc)


def _scoring_failed(spec: TrialSpec, suite: Suite, task: Task, transcript: Transcript, exc: Exception) -> Score:
    message = f"scoring failed: {type(exc).__name__}: {exc}"
    transcript.event("error", source="scorer", message=message)
    log.warning("trial.scoring_failed", trial=spec.trial_id, error=message[:300])
    return Score(suite=suite.name, task=task.id, verdict="runtime_error", error=message[:4000])


async def _score_once(spec: TrialSpec, suite: Suite, task: Task, device: str, kernel: Path, transcript: Transcript) -> Score:
    # The scorer's payloads (inputs and outputs, GBs at full task size) pass through files in the
    # workspace, so its size (and the process backend's file-size limit) follows the memory limit.
    cfg = _sandbox_config(spec.sandbox, device, spec.trial_id, "scorer").model_copy(
        update={"memory": spec.score_memory, "workspace_size": spec.score_memory})
    async with open_sandbox(cfg) as sb:
        transcript.event("harness_event", kind="sandbox_opened", role="scorer", workdir=sb.workdir, info=sb.info.to_dict())
        await _stage_suite(sb, suite)
        await sb.write_file(KERNEL_FILE, kernel.read_bytes())
        result = await sb.exec(_score_command(spec, sb, suite, task, device), timeout=spec.score_timeout_s)
        if result.exit_code == 2 and not result.timed_out:
            raise ScoringRefused(f"the scorer refused to score {spec.trial_id}: "
                                 f"{_last_line(result.stderr or result.stdout).removeprefix('error: ')}")
        if result.exit_code != 0 or result.timed_out:
            broke = result.exit_code == 1 and not result.timed_out and SCORER_BROKE in result.stderr
            failed = _ScorerBroke if broke else _ScoringFailed
            raise failed(f"scorer exited {result.exit_code}{' (timed out)' if result.timed_out else ''}: "
                         f"{(result.stderr or result.stdout)[-2000:]}")
        return Score.from_dict(json.loads(await sb.read_file(SCORE_FILE)))


class _ScoringFailed(Exception):
    pass


class ScoringRefused(UserError):
    """The scorer's exit 2: its input or its host must change (a kernel cannot cause one), and every
    trial would meet the same. A sweep stops with the fix instead of recording each trial as the
    model's runtime_error; the trial stays to be redone by --resume."""


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:1000] if lines else "(no message)"


class _ScorerBroke(_ScoringFailed):
    """The scorer's own exit 1 with SCORER_BROKE: its failure, not the kernel's."""


def staged_suite_dir(suite: Suite) -> str:
    """Where the scoring sandbox holds the suite, relative to its workdir. A plain folder (no
    suite.toml) takes its name and level from its own and its parent's folder names
    (`KernelBench/level1` -> `kernelbench-level1`, level 1), so it keeps both."""
    if suite.has_manifest:
        return SUITE_DIR
    parts = [p for p in (suite.root.parent.name, suite.root.name) if p and p not in (".", "..")]
    return "/".join([SUITE_DIR, *parts])


async def _stage_suite(sb: Sandbox, suite: Suite) -> None:
    """Copy the manifest and every task file (not the reference solutions): the loader checks
    that each task the manifest names exists."""
    files = [suite.root / "suite.toml"] if suite.has_manifest else []
    files += [t.path for t in suite.tasks.values()]
    base = staged_suite_dir(suite)
    for path in files:
        await sb.write_file(f"{base}/{path.relative_to(suite.root).as_posix()}", path.read_bytes())


def _score_command(spec: TrialSpec, sb: Sandbox, suite: Suite, task: Task, device: str) -> str:
    args = ["python3", "-m", "scorer", "score", "--suite", staged_suite_dir(suite), "--task", task.id,
            "--kernel", KERNEL_FILE, "--out", SCORE_FILE, "--device", device]
    for key, value in spec.score_options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is not False and value is not None:
            args += [flag, str(value)]
    # Both backends already put code_root on PYTHONPATH, and this workspace holds only suite/
    # and kernel.py, so `-m scorer` can only resolve to the read-only tree.
    env = {
        "TORCH_EXTENSIONS_DIR": f"{sb.workdir}/.cache/torch_extensions",
        "TRITON_CACHE_DIR": f"{sb.workdir}/.cache/triton",
        # The workspace, not the container's small /tmp: the scorer's payload files go here.
        "TMPDIR": f"{sb.workdir}/.cache/tmp",
    }
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    return (f"cd {shlex.quote(sb.workdir)} && mkdir -p {shlex.quote(env['TMPDIR'])} && "
            f"{assignments} {shlex.join(args)}")


async def _close_model(model: ModelClient) -> None:
    try:
        await model.aclose()
    except Exception:  # a failing close must not hide the trial's own outcome
        log.warning("model.close_failed", model=model.model_id, exc_info=True)
