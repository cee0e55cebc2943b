"""Kill a real sweep with SIGKILL mid-run, resume it, and check every trial ran exactly once.

Runs the CLI in a subprocess with scripted models over part of the demo suite: once with the
process sandbox (always), once in real Docker (marked `docker`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from orchestrator.prepare import sweep_label
from sandbox.docker_client import SWEEP
from tests.orchestrator.sweep_helpers import assert_sweep_complete, cli, kill_mid_sweep, write_spec

MODELS = [{"id": "scripted:reference"}, {"id": "scripted:hacker"}, {"id": "scripted:broken"}]
# One task: three trials start at once, one is done while the others run (what the kill needs), and
# each a real trial (~14 s of CPU on the 2-core box); a second task only doubled the run.
TASKS = ["swish"]


def _docker_ready() -> bool:
    try:
        from sandbox.docker_client import daemon_answers
    except ImportError:
        return False
    return daemon_answers()


def _sweep_containers(sweep_dir: Path) -> list[str]:
    import docker

    client = docker.from_env()
    try:
        found = client.containers.list(all=True, filters={"label": f"{SWEEP}={sweep_label(sweep_dir)}"}, ignore_removed=True)
        return [c.name for c in found]
    finally:
        client.close()


def _kill_and_resume(tmp_path: Path, backend: str) -> None:
    sweep_dir = tmp_path / "sweep"
    spec = write_spec(tmp_path / "spec.toml", name="killtest", models=MODELS, backend=backend, out=sweep_dir, tasks=TASKS)
    docker = backend == "docker"
    at_kill = kill_mid_sweep([str(spec)], sweep_dir, ready=lambda: not docker or bool(_sweep_containers(sweep_dir)))
    if backend == "docker":  # the killed run leaves the containers of its running trials behind
        assert _sweep_containers(sweep_dir)
    done_before = {tid: r for tid, r in at_kill.items() if r["state"] == "done"}
    running_at_kill = [tid for tid, r in at_kill.items() if r["state"] == "running"]
    assert done_before and running_at_kill
    score_mtimes = {tid: (sweep_dir / r["rel_dir"] / "score.json").stat().st_mtime_ns for tid, r in done_before.items()}

    resumed = cli("sweep", "--resume", str(sweep_dir))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"sweep folder: {sweep_dir}" in resumed.stdout
    if backend == "docker":  # pruned at the resume's start; its own containers closed as it went
        assert _sweep_containers(sweep_dir) == []
        assert "sandbox_pruned" in (sweep_dir / "sweep.log.jsonl").read_text()

    rows = {r["trial_id"]: r for r in assert_sweep_complete(sweep_dir, expected_trials=len(MODELS) * len(TASKS))}
    for tid, before in done_before.items():  # finished trials kept as they were, not re-run
        assert rows[tid]["attempts"] == before["attempts"] and rows[tid]["finished_at"] == before["finished_at"]
        assert (sweep_dir / before["rel_dir"] / "score.json").stat().st_mtime_ns == score_mtimes[tid]
    for tid in running_at_kill:  # interrupted trials restarted: one more attempt, one clean folder
        assert rows[tid]["attempts"] == at_kill[tid]["attempts"] + 1
    # Which verdict each kernel earns is the scorer's business (tested there); a sweep must
    # never let the hacker or the broken kernel pass.
    verdicts = {(r["task"], r["model"]): r["verdict"] for r in rows.values()}
    assert all(verdicts[(t, m)] != "passed" for t in TASKS for m in ("scripted:broken", "scripted:hacker"))

    board = cli("leaderboard", str(sweep_dir), "--format", "json")
    assert board.returncode == 0, board.stderr
    summary = {m["model"]: m for m in json.loads(board.stdout)["models"]}
    assert {m: s["finished"] for m, s in summary.items()} == {m["id"]: len(TASKS) for m in MODELS}
    assert summary["scripted:hacker"]["pass_at_1"] == 0.0


@pytest.mark.slow
def test_sigkill_then_resume_process_sandbox(tmp_path: Path) -> None:
    _kill_and_resume(tmp_path, "process")


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.skipif(not os.environ.get("CI") and not _docker_ready(), reason="no Docker daemon (CI always has one)")
def test_sigkill_then_resume_docker(tmp_path: Path) -> None:
    _kill_and_resume(tmp_path, "docker")
