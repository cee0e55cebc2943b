"""Spec validation through the real CLI: one line on stderr naming the fix, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.ledger import Ledger
from orchestrator.planner import resolve_tasks
from orchestrator.prepare import LEDGER_FILE, freeze
from orchestrator.spec import load_spec
from tests.orchestrator.sweep_helpers import cli

BASE = """name = "v"
[[models]]
id = "scripted:reference"
[[suites]]
name = "demo"
"""

CASES = {
    "unknown_prefix": (BASE.replace("scripted:reference", "foo:bar"), "unknown model prefix 'foo:'"),
    "missing_key": (BASE.replace("scripted:reference", "openai:gpt-5"), "OPENAI_API_KEY"),
    "missing_key_env": (BASE.replace('id = "scripted:reference"', 'id = "openai:x"\napi_key_env = "KA_TEST_UNSET_KEY"'),
                        "KA_TEST_UNSET_KEY"),
    "missing_suite": (BASE.replace('name = "demo"', 'name = "no-such-suite"'), "no suite 'no-such-suite'"),
    "unknown_task": (BASE + 'include = ["no_such_task"]\n', "matches no task"),
    "bad_field": (BASE + "[budget]\nmax_turns = -3\n", "budget.max_turns"),
    "unknown_field": (BASE.replace('name = "v"', 'name = "v"\nsampels = 3'), "sampels: unknown field"),
    "bad_toml": ("name = \n", "invalid TOML"),
    "no_models": ('name = "v"\nmodels = []\n[[suites]]\nname = "demo"\n', "models"),
    "unknown_harness": (BASE.replace('name = "v"', 'name = "v"\nharness = "nope"'), "unknown harness 'nope'"),
    "duplicate_names": (BASE + '[[models]]\nid = "scripted:reference"\n', "distinct `name`"),
    "missing_replay": (BASE.replace("scripted:reference", "replay:/no/such/transcript.jsonl"), "no transcript at"),
    "bad_gpu": (BASE.replace('name = "v"', 'name = "v"\ngpus = [7]'), "not visible"),
    "unknown_executor": (BASE.replace('name = "v"', 'name = "v"\nexecutor = "dask"'),
                         "executor: Input should be 'local' or 'ray'"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_spec_is_one_line_exit_2_and_writes_nothing(case: str, tmp_path: Path) -> None:
    text, expected = CASES[case]
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    out = tmp_path / "sweep"
    proc = cli("sweep", str(spec), "--out", str(out), env={"OPENAI_API_KEY": "", "KA_TEST_UNSET_KEY": ""}, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert expected in proc.stderr
    assert not out.exists()


def test_missing_spec_file_and_resume_without_sweep(tmp_path: Path) -> None:
    proc = cli("sweep", str(tmp_path / "nope.toml"))
    assert proc.returncode == 2 and "no sweep spec" in proc.stderr
    spec = tmp_path / "spec.toml"
    spec.write_text(BASE)
    proc = cli("sweep", str(spec), "--resume", "--out", str(tmp_path / "none"))
    assert proc.returncode == 2 and "no sweep to resume" in proc.stderr
    proc = cli("sweep", str(tmp_path))
    assert proc.returncode == 2 and "--resume" in proc.stderr


def test_resume_refuses_a_changed_spec(tmp_path: Path) -> None:
    spec_path = tmp_path / "spec.toml"
    spec_path.write_text(BASE)
    sweep = tmp_path / "sweep"
    spec = load_spec(spec_path)
    freeze(sweep, spec, resolve_tasks(spec))
    Ledger(sweep / LEDGER_FILE).close()
    proc = cli("sweep", str(spec_path), "--out", str(sweep))
    assert proc.returncode == 2 and "already holds a sweep" in proc.stderr
    spec_path.write_text(BASE.replace('name = "v"', 'name = "v"\nsamples = 3'))
    proc = cli("sweep", str(spec_path), "--resume", "--out", str(sweep))
    assert proc.returncode == 2 and "spec changed" in proc.stderr and "samples" in proc.stderr


def test_ray_executor_without_ray_names_the_install(tmp_path: Path) -> None:
    # A `ray` package that fails to import stands for an install without the [ray] extra.
    shadow = tmp_path / "shadow" / "ray"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'ray'\")\n")
    spec = tmp_path / "spec.toml"
    spec.write_text(BASE)
    out = tmp_path / "sweep"
    for args in (["--executor", "ray"], []):
        if not args:
            spec.write_text(BASE.replace('name = "v"', 'name = "v"\nexecutor = "ray"'))
        proc = cli("sweep", str(spec), "--out", str(out), *args, env={"PYTHONPATH": str(shadow.parent)}, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and "pip install 'kernelarena[ray]'" in proc.stderr, proc.stderr
        assert not out.exists()
    proc = cli("sweep", str(spec), "--executor", "dask", "--out", str(out))
    assert proc.returncode == 2 and "unknown --executor 'dask'" in proc.stderr


def test_the_cli_starts_without_importing_torch() -> None:
    """torch costs about 2 s of CPU to import; commands that score nothing (help, bad input, the
    sweep driver, leaderboards) never import it: only scoring and the suite linter do."""
    import subprocess
    import sys

    probe = ("import sys, orchestrator.cli, orchestrator.launch, orchestrator.leaderboard, orchestrator.replay; "
             "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "False", out.stderr[-2000:]
