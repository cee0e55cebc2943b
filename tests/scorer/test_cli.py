"""The CLI surfaces, run as a user would (subprocess): exit codes, one-line errors, outputs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scorer.conftest import KERNELS, REPO

KERNELARENA = [sys.executable, "-c", "from orchestrator.cli import main; main()"]
FAST = ["--device", "cpu", "--repetitions", "2", "--warmup", "1"]


def run(args: list[str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TRITON_INTERPRET="1")
    return subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, fix", [
    (["--suite", "no-such-suite", "--task", "swish", "--kernel", "k.py"], "kernelarena suites"),
    (["--suite", "demo", "--task", "no_such_task", "--kernel", "k.py"], "kernelarena tasks demo"),
    (["--suite", "demo", "--kernel", "k.py"], "--task TASK"),
    (["--suite", "demo", "--task", "swish", "--kernel", "no/such/kernel.py"], "no such file"),
])
def test_bad_input_is_one_line_exit_2(args: list[str], fix: str) -> None:
    proc = run(KERNELARENA + ["score", *args])
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fix in lines[0]
    assert "Traceback" not in proc.stderr


def test_score_json_exits_0_even_when_incorrect() -> None:
    proc = run(KERNELARENA + ["score", "--suite", "demo", "--task", "swish", "--kernel", str(KERNELS / "wrong.py"),
                              "--json", "--skip-timing", *FAST])
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["verdict"] == "incorrect" and data["schema_version"] == 1


def test_solutions_tree_prints_per_model_table(tmp_path: Path) -> None:
    good = tmp_path / "swish" / "good-model"
    bad = tmp_path / "swish" / "bad-model"
    good.mkdir(parents=True)
    bad.mkdir(parents=True)
    shutil.copy(REPO / "suites/demo/solutions/swish/kernel.py", good / "kernel.py")
    shutil.copy(KERNELS / "wrong.py", bad / "kernel.py")
    proc = run(KERNELARENA + ["score", "--suite", "demo", "--solutions", str(tmp_path), "--json", "--seeds", "2", *FAST])
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["good-model"]["summary"]["solved"] == 1 and data["good-model"]["summary"]["score"] > 0
    assert data["bad-model"]["summary"]["solved"] == 0 and data["bad-model"]["summary"]["score"] == 0
    assert json.loads((good / "score.json").read_text())["verdict"] == "passed"
    table = run(KERNELARENA + ["score", "--suite", "demo", "--solutions", str(tmp_path), "--skip-timing", "--seeds", "2", *FAST])
    assert table.returncode == 0
    for column in ("solved", "median", "geomean", "fast_1", "good-model", "bad-model"):
        assert column in table.stdout


def test_solutions_tree_with_unknown_task_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "not_a_task" / "m").mkdir(parents=True)
    proc = run(KERNELARENA + ["score", "--suite", "demo", "--solutions", str(tmp_path)])
    assert proc.returncode == 2 and "not a task of suite 'demo'" in proc.stderr


def test_python_m_scorer_writes_score_json(tmp_path: Path) -> None:
    out = tmp_path / "out" / "score.json"
    proc = run([sys.executable, "-m", "scorer", "score", "--suite", "demo", "--task", "swish",
                "--kernel", str(KERNELS / "syntax_error.py"), "--out", str(out), "--skip-timing", "--device", "cpu"])
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["verdict"] == "compile_error"
    assert [p.name for p in out.parent.iterdir()] == ["score.json"]  # no temp file left behind


def test_python_m_scorer_bad_task_is_exit_2(tmp_path: Path) -> None:
    proc = run([sys.executable, "-m", "scorer", "score", "--suite", "demo", "--task", "nope",
                "--kernel", "k.py", "--out", str(tmp_path / "s.json")])
    assert proc.returncode == 2 and proc.stderr.startswith("error: ")


def test_cpu_scoring_needs_no_triton_setting_from_the_user() -> None:
    """A new user's `kernelarena score --device cpu` without TRITON_INTERPRET: Triton runs in its
    interpreter (the scorer sets it), not 'no active driver' on every Triton kernel."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run(KERNELARENA + ["score", "--suite", "demo", "--task", "swish", "--kernel",
                                         str(REPO / "suites" / "demo" / "solutions" / "swish" / "kernel.py"),
                                         "--json", "--skip-timing", *FAST],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdict"] == "passed", proc.stdout[-2000:]


def test_a_task_whose_reference_needs_a_missing_package_is_one_line_exit_2(tmp_path: Path) -> None:
    """The environment's gap (the real corpus's KDA task imports einops): the user is told which
    package to install, not shown a worker's traceback as the scorer's own failure."""
    suite = tmp_path / "needs_pkg"
    suite.mkdir()
    (suite / "suite.toml").write_text('name = "needs_pkg"\ntargets = ["cpu"]\nbaseline = "eager"\n'
                                      '[tasks.swishy]\nlevel = 1\ncategory = "activation"\ndtype = "float32"\n')
    swish = (REPO / "suites" / "demo" / "swish.py").read_text()
    (suite / "swishy.py").write_text("import kernelarena_no_such_package.layers  # noqa\n" + swish)
    kernel = REPO / "suites" / "demo" / "solutions" / "swish" / "kernel.py"
    proc = run(KERNELARENA + ["score", "--suite", str(suite), "--task", "swishy", "--kernel", str(kernel), *FAST])
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "imports 'kernelarena_no_such_package'" in lines[0] and "pip install kernelarena_no_such_package" in lines[0]
