"""scripts/gpu_results.py: a GPU run's part files become a valid record (docs/results/gpu_latest.json),
and docs/GPU_RESULTS.md is the table generated from the committed record."""

from __future__ import annotations

import importlib
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from scripts import gpu_results
from scripts.gpu_results import record_from_run, render, validate

COMMIT = "71f4e210a6c2cbdb56902a318a697b86dcda5caa"


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def _corpus_row(name: str, ok: bool) -> dict[str, Any]:
    return {"name": name, "pattern": None, "task": "swish", "ok": ok, "verdict": "passed" if ok else "incorrect"}


def _sample_run(out: Path) -> None:
    """Each part's file as the part writes it (gpu_check's suites part, tests/hacks/gpu_corpus.py,
    tests/hacks/real/score_real.py, benchmarks/do_bench_agreement.py, benchmarks/busy_device.py)."""
    _write(out / "suites_summary.json", {"passed": 46, "total": 47, "seconds": 331.2, "workers": 4})
    _write(out / "suites_summary_at8.json", {"passed": 40, "total": 47, "seconds": 200.0, "workers": 8})
    _write(out / "corpus_attacks" / "gpu_corpus.json",
           {"device": "cuda", "results": [_corpus_row("a", True), _corpus_row("b", True), _corpus_row("c", False)],
            "not_run": ["d"]})
    _write(out / "corpus_clean" / "gpu_corpus.json",
           {"device": "cuda", "results": [_corpus_row("e", True), _corpus_row("f", True)], "not_run": []})
    _write(out / "real" / "real_corpus.json", {"device": "cuda", "results": [
        {"id": "agrees", "agrees": True, "as_expected": None},
        {"id": "differs-as-expected", "agrees": False, "as_expected": True},
        {"id": "differs", "agrees": False, "as_expected": None},
        {"id": "expect-not-held", "agrees": True, "as_expected": False},
        {"id": "scorer-error", "verdict": "scorer_error", "agrees": False}]})
    _write(out / "do_bench.json", [
        {"task": "t1", "graph_difference": 0.01}, {"task": "t2", "graph_difference": -0.019},
        {"task": "t3", "graph_difference": -0.59}, {"task": "t4", "scorer_speedup": None}])
    _write(out / "busy.json", {"device": "cuda", "rows": {
        "quiet": [{"suite": "demo", "task": "swish", "speedup": 2.0}, {"suite": "demo", "task": "softmax", "speedup": 1.0}],
        "busy": [{"suite": "demo", "task": "swish", "speedup": 2.02}],
        "exclusive": [{"suite": "demo", "task": "softmax", "speedup": 0.97},
                      {"suite": "demo", "task": "row_sum", "speedup": 5.0}]}, "agents": {}})


def test_a_runs_part_files_make_a_valid_record_and_a_table_of_its_figures(tmp_path: Path) -> None:
    _sample_run(tmp_path)
    record = record_from_run(tmp_path, commit=COMMIT, device="NVIDIA H100 80GB HBM3", date="2026-12-07",
                             real_total=65, parts_seconds={"suites": 354.04, "busy": 120.0})
    assert validate(record) == []
    assert record["suites"] == {"passed": 46, "total": 47, "seconds": 331.2, "workers": 4}  # the untagged run
    assert record["attacks"] == {"as_expected": 2, "total": 4}  # the budget's unscored entry counts in the whole
    assert record["clean"] == {"passed": 2, "total": 2}
    assert record["real"] == {"agree": 2, "total": 65}
    assert record["do_bench"] == {"within_2pct": 2, "tasks": 4}
    assert record["busy"] == {"max_drift_pct": 3.0}  # softmax exclusive 0.97 against 1.0; row_sum has no quiet
    assert record["parts_seconds"] == {"suites": 354.0, "busy": 120.0}
    json.loads(json.dumps(record))  # what gpu_check writes

    table = render(record, [("2026-12-07-run.md", "the run")])
    for figure in ("46 of 47 passed, in 331.2 s with 4 scored at once", "2 of 4 as expected", "2 of 2 passed",
                   "2 of 65 as the manifest says", "2 of 4 tasks within 2%", "within 3% of quiet",
                   "NVIDIA H100 80GB HBM3", COMMIT, "2026-12-07", "suites 354 s", "(results/2026-12-07-run.md)",
                   gpu_results.REPRODUCE):
        assert figure in table
    assert "not measured" not in table


def test_parts_that_did_not_run_are_null_and_said_so(tmp_path: Path) -> None:
    record = record_from_run(tmp_path, commit=COMMIT, device="cpu", date="2026-12-07", real_total=65)
    assert validate(record) == []
    assert [record[p] for p in gpu_results.PARTS] == [None] * len(gpu_results.PARTS)
    assert render(record, []).count("not measured on this commit") == len(gpu_results.PARTS)


@pytest.mark.parametrize("change, complaint", [
    ({"extra": 1}, "unknown field 'extra'"),
    ({"suites": {"passed": 48, "total": 47, "seconds": 1.0, "workers": 4}}, "more than the whole"),
    ({"suites": {"passed": 4, "total": 47, "seconds": 1.0}}, "exactly"),
    ({"attacks": {"as_expected": True, "total": 4}}, "attacks.as_expected"),
    ({"clean": {"passed": 1.5, "total": 4}}, "clean.passed"),
    ({"busy": {"max_drift_pct": -1}}, "busy.max_drift_pct"),
    ({"commit": "unknown"}, "KA_COMMIT"),
    ({"date": "7 Dec"}, "YYYY-MM-DD"),
    ({"log": "notes.md"}, "docs/results/"),
    ({"parts_seconds": {"suites": "fast"}}, "parts_seconds"),
])
def test_a_wrong_record_is_refused_with_its_fault(change: dict[str, Any], complaint: str) -> None:
    record = {"commit": COMMIT, "device": "H100", "date": "2026-12-07", **dict.fromkeys(gpu_results.PARTS)}
    assert validate(record) == []
    errors = validate({**record, **change})
    assert errors and complaint in "; ".join(errors)
    missing = dict(record)
    del missing["busy"]
    assert validate(missing) == ["missing field 'busy'"]


def test_the_real_corpus_whole_is_the_manifests_entries_that_the_run_selects() -> None:
    entries = tomllib.loads(gpu_results.REAL_MANIFEST.read_text(encoding="utf-8"))["entries"]
    assert gpu_results.real_selected() == len(entries) > 0
    one = entries[0]["id"]
    assert 1 <= gpu_results.real_selected(one) < len(entries)


def test_the_committed_table_is_generated_from_the_committed_record() -> None:
    record = gpu_results.load()
    assert (gpu_results.ROOT / record["log"]).is_file()
    assert gpu_results.TABLE.read_text(encoding="utf-8") == render(record, gpu_results.dated_logs()), (
        "docs/GPU_RESULTS.md is stale: run python scripts/gpu_results.py render")


def test_gpu_check_writes_the_record_of_its_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gpu_check = importlib.import_module("scripts.gpu_check")  # imports the scorer: only this test pays for it
    monkeypatch.setenv("KA_COMMIT", COMMIT)
    _sample_run(tmp_path)
    line = gpu_check._write_record(tmp_path, "cpu", "", {"suites": 12.0})
    record = json.loads((tmp_path / "gpu_latest.json").read_text())
    assert line.endswith("(valid)") and validate(record) == []
    assert record["commit"] == COMMIT and record["device"] == "cpu" and record["suites"]["passed"] == 46
    assert record["real"]["total"] == gpu_results.real_selected()
