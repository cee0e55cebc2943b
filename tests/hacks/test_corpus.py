"""The corpus's shape and its static side. Every attack in tests/hacks/attacks is caught by the real
scorer with its own pattern id (test_corpus_library_attacks.py, test_corpus_runtime_attacks.py), and
every kernel in tests/hacks/clean passes with no hack and no flag (test_corpus_clean.py); CPU here,
the same corpus on a GPU: tests/hacks/gpu_corpus.py."""

from __future__ import annotations

import pytest

import scorer.judge.rulings  # noqa: F401  (registers every check)
from scorer.checks.catalog import PATTERNS
from scorer.checks.static import analyze_source
from scorer.judge.registry import checks_of
from tests.hacks.corpus import attack_entries, clean_entries, suite_for

ATTACKS = attack_entries()
CLEAN = clean_entries()


def test_every_pattern_has_two_attacks() -> None:
    per_pattern = {p.id: [e for e in ATTACKS if e.pattern == p.id] for p in PATTERNS}
    assert {pid: len(es) for pid, es in per_pattern.items() if len(es) < 2} == {}
    # at least one per pattern runs on CPU, except where the check only exists on a GPU
    cpu_missing = {pid for pid, es in per_pattern.items() if all(e.gpu_only for e in es)}
    assert cpu_missing <= {"impossible-speed"}


def test_clean_corpus_size() -> None:
    assert len(CLEAN) >= 15
    assert sum(e.gpu_only for e in CLEAN) >= 2  # CUDA C++ (load_inline) kernels


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in CLEAN])
def test_clean_kernel_static_silent(entry) -> None:
    suite = suite_for(entry)
    findings = analyze_source(entry.path.read_text(), str(entry.path), suite.policy, task_dtype="float32")
    assert findings == []


@pytest.mark.parametrize("entry", [pytest.param(e, id=e.name) for e in ATTACKS if e.gpu_only
                                   and "static" in checks_of(e.pattern)
                                   and e.pattern in ("stream-injection", "cache-residency")])
def test_gpu_only_attacks_static_part_on_cpu(entry) -> None:
    findings = analyze_source(entry.path.read_text(), str(entry.path), suite_for(entry).policy)
    assert entry.pattern in {f.pattern for f in findings}


@pytest.mark.slow
def test_gpu_corpus_script_runs_on_cpu(tmp_path) -> None:
    import json
    import subprocess
    import sys

    from tests.hacks.corpus import REPO

    proc = subprocess.run([sys.executable, "tests/hacks/gpu_corpus.py", "--device", "cpu", "--only", "swish_flat",
                           "--out", str(tmp_path)], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads((tmp_path / "gpu_corpus.json").read_text())
    assert [r["name"] for r in data["results"]] == ["swish_flat"] and data["results"][0]["ok"]
    assert {p["pattern"] for p in data["patterns"]} >= {"stream-injection", "impossible-speed"}
    assert "false+" in proc.stdout
    # The judge's bound, recorded for every timed kernel (its calibration on a GPU).
    assert data["results"][0]["judge_bound_ms"] > 0 and "judge bound / reported median (clean)" in proc.stdout
