"""The Ray executor on a real local Ray cluster: a head (no CPUs, so no trial runs there) and two
worker nodes, each its own raylet, started once for the module and stopped however it ends.

Sweeps run through the CLI in a subprocess (a Ray driver of its own connecting to the cluster),
with scripted models over part of the demo suite in process sandboxes. The checks read only the
sweep folder (ledger, run folders, log), never the executor's memory.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.orchestrator.sweep_helpers import REPO, assert_sweep_complete, cli, kill_mid_sweep, ledger_rows, write_spec

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'kernelarena[ray]'")
from ray.cluster_utils import Cluster  # noqa: E402

pytestmark = pytest.mark.slow

# Few trials: each costs ~5 s of this 2-core box's CPU (a scorer process importing torch).
MODELS = [{"id": "scripted:reference"}, {"id": "scripted:hacker"}, {"id": "scripted:broken"}]
# Three trials for the kill tests: all start at once on the two worker nodes, one is done while
# another runs (what the driver's kill needs) and a node holds a running one (what its kill needs).
KILL_MODELS = MODELS
KILL_TASKS = ["swish"]
STORE_BYTES = 80 * 1024**2
# A killed node is declared dead within ~2 s instead of the default ~30 s.
FAST_HEALTH = {"health_check_period_ms": 500, "health_check_failure_threshold": 4, "health_check_timeout_ms": 500}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    c = Cluster()
    try:
        c.add_node(num_cpus=0, include_dashboard=False, object_store_memory=STORE_BYTES, _system_config=FAST_HEALTH)
        for _ in range(2):
            c.add_node(num_cpus=2, object_store_memory=STORE_BYTES)
        c.wait_for_nodes()
        yield c
    finally:
        c.shutdown()


def _ray_args(cluster: Cluster) -> list[str]:
    return ["--executor", "ray", "--ray-address", cluster.address]


def _log(sweep_dir: Path, event: str) -> list[dict[str, Any]]:
    lines = (sweep_dir / "sweep.log.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("event") == event]


def _spec(tmp_path: Path, name: str, models: list[dict[str, str]], tasks: list[str],
          total: int = 4) -> tuple[Path, Path]:
    sweep_dir = tmp_path / name
    return write_spec(tmp_path / f"{name}.toml", name=name, models=models, backend="process",
                      out=sweep_dir, tasks=tasks, total=total), sweep_dir


def _most_at_once(rows: list[dict[str, Any]]) -> int:
    """Most trials between marked running and recorded at one moment (from the ledger)."""
    edges = sorted([(r["started_at"], 1) for r in rows] + [(r["finished_at"], -1) for r in rows],
                   key=lambda e: (e[0], e[1]))
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def _verdicts(rows: list[dict[str, Any]]) -> dict[str, str]:
    return {r["trial_id"]: r["verdict"] for r in rows}


async def test_limits_actor_bounds_slots_and_pauses_a_failing_provider(cluster: Cluster) -> None:
    from orchestrator.ray_executor import RayBreaker, RayLimits, ray_execution
    from orchestrator.spec import parse_spec

    spec = parse_spec({
        "name": "limits", "models": [{"id": "scripted:reference"}], "suites": [{"name": "demo"}],
        "gpus": "cpu", "sandbox": {"backend": "process"}, "executor": "ray", "ray": {"address": cluster.address},
        "concurrency": {"total": 3, "per_provider": {"scripted": 2}},
        "failure": {"consecutive_to_pause": 2, "pause_s": 1.5},
    }, "test")
    async with ray_execution(spec, "limits-test") as run:
        limits, breaker = run.limits, run.breaker
        assert isinstance(limits, RayLimits) and isinstance(breaker, RayBreaker)
        inside: list[str] = []
        most = 0

        async def hold(provider: str, tag: str) -> None:
            nonlocal most
            async with limits.agent_slot(provider, "m"):
                inside.append(tag)
                most = max(most, sum(1 for t in inside if t.startswith(provider)))
                await asyncio.sleep(0.3)
                inside.remove(tag)

        await asyncio.gather(*(hold("scripted", f"scripted{i}") for i in range(5)))
        assert most == 2  # per_provider, held across callers by the one actor
        for _ in range(50):  # releases are sent without waiting for them
            if await run.actor.held.remote() == 0:
                break
            await asyncio.sleep(0.1)
        assert await run.actor.held.remote() == 0

        assert breaker.failure("openai", "429 after retries") == 0.0
        assert breaker.failure("openai", "429 after retries") == 1.5
        started = time.monotonic()
        await breaker.wait_ready("openai")
        assert time.monotonic() - started >= 1.0
        await breaker.wait_ready("scripted")  # other providers go on


def test_demo_sweep_gives_the_same_verdicts_local_and_on_ray(tmp_path: Path, cluster: Cluster) -> None:
    # total = 2 below the cluster's 4 CPUs: the limits actor, not Ray, must hold the sweep to it.
    spec, _ = _spec(tmp_path, "demo", MODELS, ["swish"], total=2)
    local_dir, ray_dir = tmp_path / "local", tmp_path / "ray"
    local = cli("sweep", str(spec), "--out", str(local_dir))
    assert local.returncode == 0, local.stderr[-3000:]
    on_ray = cli("sweep", str(spec), "--out", str(ray_dir), *_ray_args(cluster))
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]

    expected = len(MODELS)
    local_rows = assert_sweep_complete(local_dir, expected)
    ray_rows = assert_sweep_complete(ray_dir, expected)
    assert _verdicts(ray_rows) == _verdicts(local_rows)
    by_model = {r["model"]: r["verdict"] for r in ray_rows}
    assert by_model["scripted:reference"] == "passed"
    assert by_model["scripted:hacker"] == "hack_detected"
    assert by_model["scripted:broken"] not in ("passed", None)
    assert all(r["attempts"] == 1 for r in ray_rows)
    assert _most_at_once(ray_rows) <= 2

    # Every trial ran on a worker node of the cluster (the head has no CPU to give).
    (start,) = _log(ray_dir, "ray_sweep_start")
    assert start["nodes"] == 3 and start["device"] == "cpu"
    placed = {e["trial"]: e["node"] for e in _log(ray_dir, "trial_ran_on")}
    workers = {n.node_id for n in cluster.worker_nodes}
    assert sorted(placed) == sorted(r["trial_id"] for r in ray_rows)
    assert set(placed.values()) <= workers
    # The frozen spec says where it ran; what it ran matches the local sweep's.
    frozen = json.loads((ray_dir / "spec.frozen.json").read_text())
    assert frozen["executor"] == "ray" and frozen["ray"]["address"] == cluster.address


def test_driver_sigkilled_then_resumed_runs_every_trial_once(tmp_path: Path, cluster: Cluster) -> None:
    spec, sweep_dir = _spec(tmp_path, "driverkill", KILL_MODELS, KILL_TASKS)
    at_kill = kill_mid_sweep([str(spec), *_ray_args(cluster)], sweep_dir)
    done_before = {tid: r for tid, r in at_kill.items() if r["state"] == "done"}
    running_at_kill = [tid for tid, r in at_kill.items() if r["state"] == "running"]
    assert done_before and running_at_kill

    resumed = cli("sweep", "--resume", str(sweep_dir))  # the frozen spec names the cluster
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    rows = {r["trial_id"]: r for r in assert_sweep_complete(sweep_dir, len(KILL_MODELS) * len(KILL_TASKS))}
    for tid, before in done_before.items():  # kept, not re-run
        assert (rows[tid]["attempts"], rows[tid]["finished_at"]) == (before["attempts"], before["finished_at"])
    for tid in running_at_kill:  # re-run once, in one clean folder
        assert rows[tid]["attempts"] == at_kill[tid]["attempts"] + 1
    interrupted = {p.name for p in (sweep_dir / ".interrupted").iterdir()}
    assert len(interrupted) >= len(running_at_kill)
    assert len(_log(sweep_dir, "ray_sweep_start")) == 2


def _trials_running_on(node: Any) -> list[str]:
    """Trial tasks executing now in worker processes of one node (Ray titles a worker
    process `ray::<task name>` while it runs that task)."""
    raylet = node.all_processes["raylet"][0].process.pid
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        if ppid == raylet and title.startswith("ray::trial:"):
            found.append(title.removeprefix("ray::trial:"))
    return found


def test_worker_node_killed_mid_sweep_reruns_its_trials_once(tmp_path: Path, cluster: Cluster) -> None:
    # Last in the module: it removes a node (one worker node is left for the re-runs).
    spec, sweep_dir = _spec(tmp_path, "nodekill", KILL_MODELS, KILL_TASKS)
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator.cli", "sweep", str(spec), *_ray_args(cluster)],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        victim, lost = None, []
        end = time.monotonic() + 240
        while victim is None and time.monotonic() < end:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
            for node in cluster.worker_nodes:
                if running := _trials_running_on(node):
                    victim, lost = node, running
                    break
            time.sleep(0.05)
        assert victim is not None, "no trial started on a worker node in time"
        cluster.remove_node(victim, allow_graceful=False)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    rows = {r["trial_id"]: r for r in assert_sweep_complete(sweep_dir, len(KILL_MODELS) * len(KILL_TASKS))}
    lost_logged = {e["trial"] for e in _log(sweep_dir, "trial_worker_lost")}
    placed = {e["trial"]: e["node"] for e in _log(sweep_dir, "trial_ran_on")}
    assert lost_logged, "no trial was reported lost with its node"
    # Seen running on the node at the kill: lost, unless it returned in the instant between.
    assert all(tid in lost_logged or placed[tid] == victim.node_id for tid in lost)
    for tid, row in rows.items():
        assert row["attempts"] == (2 if tid in lost_logged else 1), (tid, row["attempts"])
    assert all(placed[tid] != victim.node_id for tid in lost_logged)  # re-run elsewhere
    # Each lost attempt's (empty) staging folder is kept aside, never put in place.
    aside = [p.name for p in (sweep_dir / ".interrupted").iterdir()]
    assert len(aside) == len(lost_logged)
    assert ledger_rows(sweep_dir) and not (sweep_dir / ".staging").exists()


def _docker_ready() -> bool:
    from sandbox.docker_client import daemon_answers

    return daemon_answers()


@pytest.mark.docker
@pytest.mark.skipif(not os.environ.get("CI") and not _docker_ready(), reason="no Docker daemon (CI always has one)")
def test_node_without_the_image_loads_the_drivers_tarball(tmp_path: Path) -> None:
    import docker.errors

    from orchestrator.ray_executor import ImageSetup, _save_tarball, ensure_image
    from sandbox.docker_client import connect

    # A tiny image of our own stands for the sandbox image (the real one is 2.4 GB to save).
    tag, other = f"kernelarena-raytest:{os.getpid()}", f"kernelarena-raytest:0-other-{os.getpid()}"
    (tmp_path / "ctx").mkdir()
    (tmp_path / "ctx" / "marker").write_text("x")
    (tmp_path / "ctx" / "Dockerfile").write_text("FROM scratch\nCOPY marker /marker\nLABEL kernelarena.recipe=test\n")
    tarball = tmp_path / "shared" / "image.tar"
    client = connect()
    try:
        image, _ = client.images.build(path=str(tmp_path / "ctx"), tag=tag, rm=True)
        image.tag("kernelarena-raytest", f"0-other-{os.getpid()}")  # the tarball must name ours, not another
        _save_tarball(tag, tarball)  # the driver, at the sweep's start
        assert tarball.stat().st_size > 0
        for name in (tag, other):  # a node that lacks it
            client.images.remove(name)
        with pytest.raises(docker.errors.ImageNotFound):
            client.images.get(tag)
        assert ensure_image(ImageSetup(tag, str(tarball))) == "loaded"
        assert client.images.get(tag).labels["kernelarena.recipe"] == "test"
        assert ensure_image(ImageSetup(tag, str(tarball))) == "present"
    finally:
        for name in (tag, other):
            try:
                client.images.remove(name, force=True)
            except docker.errors.ImageNotFound:
                pass
        client.close()


def test_gpu_trials_select_the_nodes_ray_labels_with_a_gpu_type() -> None:
    from ray._private.label_utils import validate_label_selector

    from orchestrator.ray_executor import gpu_node_selector

    resources = {"CPU": 64.0, "GPU": 9.0, "accelerator_type:H200": 1.0, "accelerator_type:A100": 1.0, "memory": 1e9}
    selector = gpu_node_selector(resources)
    assert selector == {"ray.io/accelerator-type": "in(A100,H200)"}
    assert validate_label_selector(selector) is None  # Ray's own check of the syntax
    assert gpu_node_selector({"CPU": 4.0}) is None
