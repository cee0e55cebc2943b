"""`executor = "ray"`: a sweep's trials run as tasks of a Ray cluster; the driver keeps the rest.

What stays on the driver, unchanged from the local executor: the planner, the SQLite ledger
(the one record of every trial), staging folders and their atomic moves, index.json, retries
and resume (orchestrator/sweep.py). What moves to the cluster:

- Each trial attempt is one Ray task (`_trial_on_node`, `ray.trial_cpus` logical CPUs) that
  runs `harnesses.trial.run_trial` into a node-local temporary folder and returns that folder's
  files; the driver writes them into the trial's staging folder. A task is never retried by Ray
  (`max_retries=0`): a lost worker or node surfaces as `TrialWorkerLost`, and the sweep's own
  retry path re-queues the trial with the attempt counted in the ledger. A lost task's files
  never reach the driver, so an attempt cannot be recorded twice.
- Scoring on a GPU asks Ray for `num_gpus=1` on the trial's node for as long as scoring runs
  (a placeholder actor holding the GPU), so the cluster's own GPU accounting keeps one timing
  per GPU at a time; the scorer's per-GPU file lock still guards the host. Such trials run only
  on nodes Ray labelled with a GPU type.
- Concurrency limits and the provider circuit breaker (pause with exponential back-off after
  repeated model errors, e.g. exhausted 429 retries) live in one actor, `LimitsActor`, holding
  the same `Limits` and `CircuitBreaker` the local executor uses.
- Docker sandboxes use each node's own daemon; a node without the image builds it, or loads
  the tarball the driver saved (`ray.image_tarball`, a path every node can read).

Every node runs the same kernelarena install as the driver (the trial code is imported there,
not shipped) and sees the suites at the paths the driver resolved (a shared folder, or the same
checkout path).
"""

from __future__ import annotations

import asyncio
import fcntl
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from harnesses.models.base import ModelError
from harnesses.trial import TrialSpec, run_trial
from kernelarena.errors import ConfigError, UserError
from kernelarena.files import replacing
from kernelarena.logs import get_logger
from orchestrator.harness_runner import HarnessRunner
from orchestrator.limits import CircuitBreaker, Limits
from orchestrator.planner import PlannedTrial
from orchestrator.spec import SweepSpec
from orchestrator.sweep import is_model_error
from sandbox.docker_client import connect
from sandbox.image import build_image, image_recipe
from sandbox.open import prune_leaked, resolve_backend
from sandbox.owners import owned_tempdir, remove_orphaned_tempdirs

log = get_logger("kernelarena.sweep")

RAY_INSTALL = "pip install 'kernelarena[ray]'"


def require_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise ConfigError(f'executor = "ray" needs Ray, which is not installed; run {RAY_INSTALL}') from None
    return ray


class TrialWorkerLost(RuntimeError):
    """The Ray worker or node running a trial died; the trial is re-queued like a broken one."""


# ---------------------------------------------------------------- limits, in one actor

class LimitsActor:
    """The sweep's concurrency limits and provider circuit breaker, for every caller at once.
    Runs as an async Ray actor, so waiting callers cost nothing but a pending call."""

    def __init__(self, spec_json: str) -> None:
        spec = SweepSpec.model_validate_json(spec_json)
        # Scoring devices are Ray's GPUs here, so the device pool of Limits goes unused.
        self.limits = Limits(spec, ["cpu"])
        self.breaker = CircuitBreaker(threshold=spec.failure.consecutive_to_pause,
                                      pause_s=spec.failure.pause_s, max_pause_s=spec.failure.max_pause_s)
        self._leases: dict[str, Any] = {}

    async def acquire(self, provider: str, model: str) -> str:
        slot = self.limits.agent_slot(provider, model)
        await slot.__aenter__()
        lease = uuid.uuid4().hex
        self._leases[lease] = slot
        return lease

    async def release(self, lease: str) -> None:
        slot = self._leases.pop(lease, None)
        if slot is not None:
            await slot.__aexit__(None, None, None)

    async def wait_ready(self, provider: str) -> bool:
        return await self.breaker.wait_ready(provider)

    async def success(self, provider: str) -> None:
        self.breaker.success(provider)

    async def failure(self, provider: str, error: str, healable: bool = True) -> float:
        return self.breaker.failure(provider, error, healable)

    async def held(self) -> int:
        return len(self._leases)


class RayLimits:
    """SweepRunner's `agent_slot`, served by the LimitsActor."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    @asynccontextmanager
    async def agent_slot(self, provider: str, model: str) -> AsyncIterator[None]:
        lease = await self.actor.acquire.remote(provider, model)
        try:
            yield
        finally:
            # Not awaited: the slot frees once the actor gets the call, and the trial need not
            # wait for that round trip (~0.6 s at 64 trials at once on a 2-core machine).
            self.actor.release.remote(lease)


class RayBreaker:
    """SweepRunner's circuit breaker, served by the LimitsActor."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    async def wait_ready(self, provider: str) -> bool:
        return bool(await self.actor.wait_ready.remote(provider))

    def success(self, provider: str) -> None:
        self.actor.success.remote(provider)  # nothing to wait for

    def failure(self, provider: str, error: str, healable: bool = True) -> float:
        # SweepRunner needs the pause now; a model-error trial is rare enough to block the
        # driver's loop for one actor round trip.
        return float(require_ray().get(self.actor.failure.remote(provider, error, healable)))


# ---------------------------------------------------------------- on the node

@dataclass(frozen=True)
class ImageSetup:
    """How a node gets the docker sandbox image it lacks."""

    tag: str
    tarball: str | None = None


@dataclass
class TrialReply:
    """What a trial task sends back: the trial folder's files and, if it broke, why."""

    files: dict[str, bytes]
    node: str
    """The Ray node id it ran on."""
    run_s: float = 0.0
    """Seconds the attempt ran on the node; the rest of its span is scheduling and transfer."""
    started_at: float = 0.0
    """Wall-clock time (time.time) it started on the node."""
    error: str | None = None
    error_kind: str | None = None
    """`user` (stop the sweep), `model` (the provider failed) or `broken`."""


@contextmanager
def _node_lock(name: str) -> Iterator[None]:
    """One holder per node (host), across every worker process on it."""
    with open(Path(tempfile.gettempdir()) / f"kernelarena-{name}.lock", "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def ensure_image(setup: ImageSetup) -> str:
    """Give this node's docker daemon the sandbox image; returns what was done."""
    with _node_lock("image"):
        if image_recipe(setup.tag) is not None:
            return "present"
        if setup.tarball:
            if not Path(setup.tarball).is_file():
                raise ConfigError(f"ray.image_tarball: {setup.tarball} is not readable on node {socket.gethostname()}; "
                                  "put it on a folder every node mounts, or unset it to build the image on each node")
            client = connect()
            try:
                with open(setup.tarball, "rb") as fh:
                    client.images.load(fh)
            finally:
                client.close()
            if image_recipe(setup.tag) is None:
                raise ConfigError(f"ray.image_tarball: {setup.tarball} does not hold {setup.tag}; "
                                  "delete it so the driver saves it again, or unset it to build the image on each node")
            log.info("sandbox_image_loaded", tag=setup.tag, tarball=setup.tarball, node=socket.gethostname())
            return "loaded"
        build_image(tag=setup.tag)
        log.info("sandbox_image_built", tag=setup.tag, node=socket.gethostname())
        return "built"


class _GpuHold:
    """Holds one GPU of Ray's accounting while a trial scores on it."""

    def gpu(self) -> str:
        ids = require_ray().get_gpu_ids()
        return f"cuda:{ids[0]}"


@asynccontextmanager
async def ray_gpu_slot() -> AsyncIterator[str]:
    """run_trial's score_slot on a node: one GPU of this node, exclusive while scoring."""
    ray = require_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    node = ray.get_runtime_context().get_node_id()
    hold = ray.remote(_GpuHold).options(
        num_gpus=1, num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote()
    try:
        yield await hold.gpu.remote()
    finally:
        ray.kill(hold)


def _prune_on_node(sweep_label: str) -> list[str]:
    """Containers of this sweep a killed driver's trials left on this node (their owning worker
    process is gone)."""
    return prune_leaked(sweep_label)


def _read_tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


TRIAL_DIR_PREFIX = "kernelarena-trial-"


def _trial_on_node(spec_json: str, image: ImageSetup | None) -> TrialReply:
    """The Ray task: one trial attempt in a node-local folder, its files returned whole."""
    started, started_at = time.monotonic(), time.time()
    spec = TrialSpec.model_validate_json(spec_json)
    node = require_ray().get_runtime_context().get_node_id()
    error: str | None = None
    kind: str | None = None
    # A trial folder a killed worker or node left behind goes with the next trial on this node.
    remove_orphaned_tempdirs(TRIAL_DIR_PREFIX)
    tmp = owned_tempdir(TRIAL_DIR_PREFIX)
    try:
        out = tmp / "trial"
        try:
            if image is not None and resolve_backend(spec.sandbox.backend) == "docker":
                ensure_image(image)
            slot = ray_gpu_slot if spec.device == "cuda" else None
            asyncio.run(run_trial(spec, out, score_slot=slot))
        except UserError as exc:
            error, kind = str(exc), "user"
        except Exception as exc:  # reported to the driver, which retries or records it
            error, kind = f"{type(exc).__name__}: {exc}"[:500], "model" if is_model_error(exc) else "broken"
        files = _read_tree(out) if out.exists() else {}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return TrialReply(files, node, time.monotonic() - started, started_at, error, kind)


# ---------------------------------------------------------------- on the driver

def _write_tree(files: dict[str, bytes], out_dir: Path) -> None:
    for rel, data in files.items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def target_device(spec: SweepSpec, cluster_gpus: float) -> str:
    """Where a Ray sweep scores: the cluster's GPUs decide `auto`."""
    if spec.gpus == "cpu" or spec.score.device == "cpu":
        return "cpu"
    if spec.score.device == "cuda" and not cluster_gpus:
        raise ConfigError("score.device: 'cuda' but the Ray cluster has no GPU; add GPU nodes or use 'auto' or 'cpu'")
    return "cuda" if cluster_gpus else "cpu"


# Ray labels every node where it finds GPUs with their type, and gives it a resource
# `accelerator_type:<type>`; trials that score on a GPU select those nodes by the label.
ACCELERATOR_LABEL = "ray.io/accelerator-type"
ACCELERATOR_RESOURCE = "accelerator_type:"


def gpu_node_selector(cluster_resources: dict[str, float]) -> dict[str, str] | None:
    """A label selector for the cluster's GPU nodes; None when Ray named no GPU type."""
    types = sorted(k.removeprefix(ACCELERATOR_RESOURCE) for k in cluster_resources if k.startswith(ACCELERATOR_RESOURCE))
    return {ACCELERATOR_LABEL: f"in({','.join(types)})"} if types else None


class RayTrialRunner:
    """A TrialRunner (orchestrator/sweep.py) that runs each attempt as a Ray task."""

    def __init__(self, spec: SweepSpec, sweep_label: str, device: str, image: ImageSetup | None,
                 body: Callable[[str, ImageSetup | None], TrialReply] = _trial_on_node,
                 nodes: dict[str, str] | None = None) -> None:
        """`body` is what the task runs (benchmarks swap in a stand-in trial); `nodes`, a label
        selector of the nodes trials may run on (GPU nodes when scoring on a GPU)."""
        self.spec = spec
        self.device = device
        self.image = image
        self.placement: dict[str, Any] = {"label_selector": nodes} if nodes else {}
        self.harness = HarnessRunner(spec, Limits(spec, [device]), sweep_label=sweep_label)
        # Ray never re-runs an attempt itself: the ledger counts every attempt.
        self._task = require_ray().remote(max_retries=0)(body)
        self.run_s: dict[str, float] = {}
        """Per trial: seconds its last returned attempt ran on its node."""
        self.wait_s: dict[str, float] = {}
        """Per trial: seconds from submitting it to its start on a node (waiting for a free CPU
        or a worker process; host clocks must agree)."""

    async def __call__(self, trial: PlannedTrial, out_dir: Path) -> None:
        ray = require_ray()
        spec = self.harness.trial_spec(trial, self.device)
        submitted = time.time()
        ref = self._task.options(num_cpus=self.spec.ray.trial_cpus, name=f"trial:{trial.trial_id}",
                                 **self.placement).remote(spec.model_dump_json(), self.image)
        try:
            reply: TrialReply = await ref
        except asyncio.CancelledError:
            ray.cancel(ref, force=True)
            raise
        except ray.exceptions.RayError as exc:
            # The worker, its node or the task's owner died: nothing came back, run it again.
            log.warning("trial_worker_lost", trial=trial.trial_id, error=str(exc)[:300])
            raise TrialWorkerLost(f"{type(exc).__name__}: {str(exc)[:300]}") from None
        _write_tree(reply.files, out_dir)
        self.run_s[trial.trial_id] = reply.run_s
        self.wait_s[trial.trial_id] = max(0.0, reply.started_at - submitted)
        log.info("trial_ran_on", trial=trial.trial_id, node=reply.node, run_s=round(reply.run_s, 3), error=reply.error)
        if reply.error_kind == "user":
            raise UserError(reply.error or "")
        if reply.error_kind == "model":
            raise TrialWorkerFailed(reply.error or "") from ModelError(reply.error or "", retryable=False)
        if reply.error_kind is not None:
            raise TrialWorkerFailed(reply.error or "")


class TrialWorkerFailed(RuntimeError):
    """The trial broke on its worker (the message is the worker's exception)."""


@dataclass
class RayExecution:
    """What session.run_sweep needs from an executor."""

    runner: RayTrialRunner
    limits: RayLimits
    breaker: RayBreaker
    actor: Any


def _save_tarball(tag: str, path: Path) -> None:
    """The driver's `docker save` of the image, written atomically, once."""
    if path.is_file():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    client = connect()
    try:
        image = client.images.get(tag)
        with replacing(path, binary=True) as fh:
            for chunk in image.save(named=tag):  # under this tag, not the image's first
                fh.write(chunk)
    finally:
        client.close()
    log.info("sandbox_image_saved", tag=tag, tarball=str(path))


def image_setup(spec: SweepSpec) -> ImageSetup | None:
    if spec.sandbox.backend == "process":
        return None
    setup = ImageSetup(tag=spec.sandbox.image, tarball=spec.ray.image_tarball)
    if setup.tarball and resolve_backend(spec.sandbox.backend) == "docker":
        _save_tarball(setup.tag, Path(setup.tarball))
    return setup


async def prune_nodes(sweep_label: str) -> None:
    """A resumed docker sweep's leftovers may sit on any node: prune on each, as the local
    executor does on its one host; never fatal."""
    ray = require_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    prune = ray.remote(num_cpus=0, max_retries=0)(_prune_on_node)
    for node in [n["NodeID"] for n in ray.nodes() if n.get("Alive")]:
        try:
            removed = await prune.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(sweep_label)
        except Exception as exc:  # hygiene only
            log.warning("sandbox_prune_failed", node=node, error=str(exc)[:300])
            continue
        if removed:
            log.info("sandbox_pruned", sweep=sweep_label, node=node, removed=removed)


@asynccontextmanager
async def ray_execution(spec: SweepSpec, sweep_label: str) -> AsyncIterator[RayExecution]:
    """Connect to (or start) Ray, start the limits actor; undo both however the sweep ends."""
    ray = require_ray()
    started = not ray.is_initialized()
    if started:
        kwargs: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
        if spec.ray.address is None:
            kwargs.update(include_dashboard=False)
        try:
            # "local": a fresh instance even where another Ray runs on this machine (a bare
            # ray.init() would join that one).
            ray.init(address=spec.ray.address or "local", **kwargs)
        except ConnectionError as exc:
            raise ConfigError(f"ray.address: no Ray cluster answers at {spec.ray.address} ({exc}); "
                              "start one with `ray start --head` or fix the address") from None
    try:
        resources = ray.cluster_resources()
        device = target_device(spec, resources.get("GPU", 0))
        nodes = gpu_node_selector(resources) if device == "cuda" else None
        if device == "cuda" and nodes is None:
            log.warning("gpu_nodes_unnamed", detail="Ray names no GPU type; a trial may land on a node "
                                                    "without a GPU and wait there for one")
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        # On the driver's own node: the limits live and die with the ledger's holder, never
        # with a worker node that may be lost mid-sweep.
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        actor = ray.remote(LimitsActor).options(num_cpus=0, max_concurrency=10_000,
                                                scheduling_strategy=here).remote(spec.model_dump_json())
        image = await asyncio.to_thread(image_setup, spec)
        if spec.sandbox.backend != "process":
            await prune_nodes(sweep_label)
        log.info("ray_sweep_start", address=spec.ray.address or "local", device=device,
                 nodes=len([n for n in ray.nodes() if n.get("Alive")]), resources=ray.cluster_resources())
        try:
            yield RayExecution(RayTrialRunner(spec, sweep_label, device, image, nodes=nodes), RayLimits(actor),
                               RayBreaker(actor), actor)
        finally:
            ray.kill(actor)
    finally:
        if started:
            ray.shutdown()
