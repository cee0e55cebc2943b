"""benchmarks/timing_stability.py runs end to end (CPU, test shapes): every protocol gives times
for the baseline and the solution of each process, and the table compares them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_stability_benchmark_times_every_protocol(tmp_path: Path) -> None:
    out = tmp_path / "stability.json"
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks/timing_stability.py"), "--device", "cpu", "--small",
         "--processes", "2", "--reps", "3", "--tasks", "add_rmsnorm", "--json", str(out)],
        capture_output=True, text=True, timeout=600, env={**os.environ, "TRITON_INTERPRET": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = json.loads(out.read_text())["add_rmsnorm"]
    assert len(runs) == 2 and all("error" not in r for r in runs)
    for run in runs:
        for protocol in ("scorer", "synced_end", "queued", "spin200", "scorer_again"):
            for who in ("baseline", "kernel"):
                rec = run[protocol][who]
                assert 0 < rec["min"] <= rec["median"] <= rec["max"]
    assert proc.stdout.count("add_rmsnorm |") == 5 and "spread" in proc.stdout
