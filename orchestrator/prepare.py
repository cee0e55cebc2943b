"""Everything checked and written before the first trial starts.

`validate` finds every user error up front (unknown harness, missing credential, missing suite or
task, bad GPU list) so a broken spec fails in one line and writes nothing. `freeze` records the
validated spec and the resolved task list in the sweep folder; a resume reads them back.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from harnesses.models import check_credentials, create_model, parse_model_id, provider_of
from harnesses.models.base import ModelError, TaskContext
from harnesses.models.credentials import rejected_key_message
from harnesses.registry import HARNESSES
from kernelarena.errors import ConfigError, UserError
from kernelarena.files import write_json_atomic
from kernelarena.logs import get_logger
from orchestrator.planner import ResolvedTask, resolve_tasks
from orchestrator.spec import ModelSpec, SweepSpec, load_spec
from scorer.tasks.suites import load_suite

FROZEN_SPEC = "spec.frozen.json"
FROZEN_TASKS = "tasks.json"
LEDGER_FILE = "ledger.sqlite"
LOG_FILE = "sweep.log.jsonl"

log = get_logger("kernelarena.sweep")


def sweep_label(sweep_dir: Path) -> str:
    """Docker label value of this sweep's containers: the folder name plus a hash of its absolute
    path, so two sweeps both written to some `out/sweep` never prune each other's leftovers."""
    digest = hashlib.sha1(str(sweep_dir.resolve()).encode()).hexdigest()[:8]
    return f"{sweep_dir.name}-{digest}"


def check_model_credentials(spec: SweepSpec) -> None:
    for model in spec.models:
        if model.api_key_env:
            if not os.environ.get(model.api_key_env):
                raise ConfigError(
                    f"model '{model.name}': environment variable {model.api_key_env} is not set; "
                    "export it or change api_key_env"
                )
            continue
        try:
            check_credentials(model.id)
        except ConfigError as exc:
            raise ConfigError(f"model '{model.name}': {exc}") from None


def _run_sync(coro: Coroutine[Any, Any, None]) -> None:
    """Run a coroutine to completion from sync code, also when an event loop is already running
    in this thread (prepare_sweep called from async code): then on a private loop in a thread,
    whose exception is raised here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(coro)
        return
    failed: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(coro)
        except BaseException as exc:  # handed to the calling thread
            failed.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if failed:
        raise failed[0]


def check_models_build(spec: SweepSpec, tasks: list[ResolvedTask]) -> None:
    """Build each client once (no request is sent) so a bad option or replay path is a spec
    error now, not a failure in every trial later."""
    suite = load_suite(tasks[0].suite_root)
    context = TaskContext(suite=suite, task=suite.task(tasks[0].task))
    for model in spec.models:
        try:
            client = create_model(model.id, task=context, **model.client_options())
        except ConfigError as exc:
            raise ConfigError(f"model '{model.name}': {exc}") from None
        _run_sync(client.aclose())


def check_keys_accepted(spec: SweepSpec) -> None:
    """One cheap authenticated call per model (all at once), so a key the provider refuses stops
    the sweep before its first trial, in one line naming the variable. A provider that cannot
    be reached, or answers the check with something else, is only logged: trials will meet it
    under the retry policy and the circuit breaker."""

    async def check(model: ModelSpec) -> str | None:
        if not provider_of(parse_model_id(model.id)[0]).model_options:
            return None  # built for a task only (scripted, replay): nothing behind it to ask
        client = create_model(model.id, **model.client_options())
        try:
            await client.check_access()
        except ModelError as exc:
            if exc.credentials:
                return f"model '{model.name}': {rejected_key_message(model.id, model.api_key_env, str(exc))}"
            log.warning("credentials_check_inconclusive", model=model.name, error=str(exc))
        except TimeoutError:
            log.warning("credentials_check_inconclusive", model=model.name, error="no answer in time")
        finally:
            await client.aclose()
        return None

    async def check_all() -> None:
        refused = [r for r in await asyncio.gather(*(check(m) for m in spec.models)) if r]
        if refused:
            raise ConfigError(refused[0])

    _run_sync(check_all())


def check_harness(spec: SweepSpec) -> None:
    for harness in {spec.harness, *(spec.harness_of(m) for m in spec.models)}:
        if harness not in HARNESSES.names():
            raise ConfigError(f"harness: unknown harness '{harness}'; known: {', '.join(HARNESSES.names())}")
    for model in spec.models:
        try:
            HARNESSES.get(spec.harness_of(model)).check_model(model.id)
        except ConfigError as exc:
            raise ConfigError(f"model '{model.name}': {exc}") from None


def scoring_devices(spec: SweepSpec) -> list[str]:
    """The device ids scoring may hold, one measurement at a time each."""
    if spec.gpus == "cpu" or spec.score.device == "cpu":
        return ["cpu"]
    import torch  # only here: the rest of the orchestrator never touches a device

    visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if spec.gpus == "auto":
        if visible:
            return [f"cuda:{i}" for i in range(visible)]
        if spec.score.device == "cuda":
            raise ConfigError("score.device: 'cuda' but no CUDA device is visible; use 'auto' or 'cpu'")
        return ["cpu"]
    missing = [i for i in spec.gpus if i >= visible]
    if missing:
        raise ConfigError(
            f"gpus: device(s) {missing} not visible ({visible} CUDA device(s) here); "
            "list visible ids or set gpus = \"cpu\""
        )
    return [f"cuda:{i}" for i in spec.gpus]


def validate(spec: SweepSpec) -> list[ResolvedTask]:
    check_harness(spec)
    check_model_credentials(spec)
    tasks = resolve_tasks(spec)
    check_models_build(spec, tasks)
    check_devices(spec)
    check_keys_accepted(spec)
    return tasks


def check_devices(spec: SweepSpec) -> None:
    """Local sweeps score on this machine's devices; a Ray sweep's GPUs are the cluster's."""
    if spec.executor == "ray":
        from orchestrator.ray_executor import require_ray

        require_ray()
        return
    scoring_devices(spec)


# Where trials run does not change what they are: a resume may switch executor or cluster.
RUN_PLACE_FIELDS = {"out", "executor", "ray"}


def with_executor(spec: SweepSpec, executor: str | None, ray_address: str | None) -> SweepSpec:
    """The CLI's --executor / --ray-address over the spec's."""
    update: dict[str, object] = {}
    if executor is not None:
        update["executor"] = executor
    if ray_address is not None:
        update["ray"] = spec.ray.model_copy(update={"address": ray_address})
    return spec.model_copy(update=update) if update else spec


def new_sweep_dir(spec: SweepSpec, out: Path | None) -> Path:
    if out is None and spec.out:
        out = Path(spec.out)
    if out is None:
        out = Path("runs") / f"{spec.name}-{time.strftime('%Y%m%d-%H%M%S')}"
    if (out / LEDGER_FILE).exists():
        raise UserError(f"{out} already holds a sweep; add --resume to continue it or choose another --out")
    return out


def find_resume_dir(spec: SweepSpec, out: Path | None) -> Path:
    if out is None and spec.out:
        out = Path(spec.out)
    if out is not None:
        if not (out / LEDGER_FILE).exists():
            raise UserError(f"{out} holds no sweep to resume; drop --resume to start one there")
        return out
    candidates = sorted(p.parent for p in Path("runs").glob(f"{spec.name}-*/{LEDGER_FILE}"))
    if not candidates:
        raise UserError(f"no earlier sweep named '{spec.name}' under runs/; drop --resume or pass --out DIR")
    return candidates[-1]


def freeze(sweep_dir: Path, spec: SweepSpec, tasks: list[ResolvedTask]) -> None:
    sweep_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(sweep_dir / FROZEN_SPEC, spec.model_dump(mode="json", exclude_unset=False))
    write_json_atomic(sweep_dir / FROZEN_TASKS, [t.model_dump(mode="json") for t in tasks])


def load_frozen(sweep_dir: Path) -> tuple[SweepSpec, list[ResolvedTask]]:
    spec_path, tasks_path = sweep_dir / FROZEN_SPEC, sweep_dir / FROZEN_TASKS
    if not spec_path.is_file() or not tasks_path.is_file():
        raise UserError(f"{sweep_dir} is not a sweep folder (no {FROZEN_SPEC}); pass the folder `kernelarena sweep` printed")
    spec = SweepSpec.model_validate_json(spec_path.read_text(encoding="utf-8"))
    tasks = TypeAdapter(list[ResolvedTask]).validate_json(tasks_path.read_text(encoding="utf-8"))
    return spec, tasks


def check_unchanged(frozen: SweepSpec, given: SweepSpec, sweep_dir: Path) -> None:
    """A resume must run what the sweep planned; a changed spec would mix two experiments."""
    a = frozen.model_dump(mode="json", exclude=RUN_PLACE_FIELDS)
    b = given.model_dump(mode="json", exclude=RUN_PLACE_FIELDS)
    changed = sorted(k for k in a if a[k] != b.get(k))
    if changed:
        raise UserError(
            f"the spec changed since {sweep_dir} started ({', '.join(changed)}); "
            f"resume with `kernelarena sweep --resume {sweep_dir}` or start a new sweep"
        )


DEFAULT_SPEC = Path(__file__).resolve().parent.parent / "examples" / "demo.toml"


@dataclass
class SweepPlan:
    spec: SweepSpec
    tasks: list[ResolvedTask]
    sweep_dir: Path
    resumed: bool


def prepare_sweep(target: Path | None, resume: bool, out: Path | None,
                  executor: str | None = None, ray_address: str | None = None) -> SweepPlan:
    """Everything that can fail on user input happens here, before anything is written.
    `executor` and `ray_address` (CLI options) override the spec's."""
    if target is not None and target.is_dir():
        if not resume:
            raise UserError(f"{target} is a folder; to continue that sweep add --resume, or pass a spec .toml")
        spec, tasks = load_frozen(target)
        spec = with_executor(spec, executor, ray_address)
        check_model_credentials(spec)
        check_devices(spec)
        check_keys_accepted(spec)
        return SweepPlan(spec, tasks, target, resumed=True)
    spec = with_executor(load_spec(target or DEFAULT_SPEC), executor, ray_address)
    tasks = validate(spec)
    if resume:
        sweep_dir = find_resume_dir(spec, out)
        frozen, frozen_tasks = load_frozen(sweep_dir)
        check_unchanged(frozen, spec, sweep_dir)
        placed = frozen.model_copy(update={"executor": spec.executor, "ray": spec.ray})
        return SweepPlan(placed, frozen_tasks, sweep_dir, resumed=True)
    sweep_dir = new_sweep_dir(spec, out)
    return SweepPlan(spec, tasks, sweep_dir, resumed=False)
