"""benchmarks/worker_start.py and benchmarks/gpu_lock_policy.py run end to end on the CPU: forked
workers answer far sooner than exec'd ones, and the lock replay accounts for its wall time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_worker_start_benchmark_compares_exec_and_the_fork_server(tmp_path: Path) -> None:
    out = tmp_path / "start.json"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks/worker_start.py"), "--device", "cpu",
                           "--workers", "3", "--json", str(out)],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "TRITON_INTERPRET": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {(r["start"], r["role"]): r["seconds"] for r in json.loads(out.read_text())}
    assert set(rows) == {(s, r) for s in ("exec", "fork server") for r in ("kernel", "reference")}
    for role in ("kernel", "reference"):
        # The later forked workers skip the imports an exec'd worker does every time.
        assert max(rows[("fork server", role)][1:]) < min(rows[("exec", role)]) / 5


@pytest.mark.slow
def test_lock_policy_replay_accounts_for_its_wall_time() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks/gpu_lock_policy.py"), "--scorings", "8",
                           "--scorers", "2", "3", "--scale", "0.02"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line.split() for line in proc.stdout.splitlines() if line.split()[:1] in (["2"], ["3"])]
    assert len(rows) == 4  # two concurrencies, shared holds whole and in pieces
    for row in rows:
        wall, exclusive, shared_only, idle = (float(x) for x in row[-5:-1])
        assert exclusive > 0 and exclusive + shared_only + idle <= wall * 1.05
