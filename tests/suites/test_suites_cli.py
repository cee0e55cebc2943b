"""`kernelarena suites`, `suites check` and `tasks`, through the real CLI app (and, for the
exit-code-2 contract, the installed console script)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelarena.errors import UserError
from orchestrator.cli import app
from scorer.errors import ScorerUserError

REPO = Path(__file__).resolve().parents[2]
WIDE = {"COLUMNS": "200"}

PLANTED_TASK = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {body}


size = 64


def get_inputs():
    return [torch.randn(size, size)]


def get_init_inputs():
    return []
'''


def _planted_suite(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "suite.toml").write_text(
        'name = "planted"\ndescription = "one good task, one constant one"\n\n'
        '[tasks.good]\nlevel = 1\nflops = 1\nbytes = 1\ntest_shapes = { size = 8 }\n\n'
        '[tasks.flat]\nlevel = 1\nflops = 1\nbytes = 1\ntest_shapes = { size = 8 }\n'
    )
    (root / "good.py").write_text(PLANTED_TASK.format(body="torch.sin(x)"))
    (root / "flat.py").write_text(PLANTED_TASK.format(body="torch.ones_like(x)"))
    return root


@pytest.fixture()
def runner() -> CliRunner:
    return CliRunner()


def test_suites_lists_builtin_suites(runner: CliRunner) -> None:
    result = runner.invoke(app, ["suites"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "demo" in result.output and "kernelbench" in result.output
    rows = {r["name"]: r for r in json.loads(runner.invoke(app, ["suites", "--json"]).output)}
    assert rows["demo"]["tasks"] == 4
    assert rows["kernelbench"]["tasks"] >= 25
    assert "cuda" in rows["kernelbench"]["targets"]


def test_suites_sees_extra_search_path(runner: CliRunner, tmp_path: Path) -> None:
    _planted_suite(tmp_path / "planted")
    result = runner.invoke(app, ["suites", "--json"], env={"KERNELARENA_SUITES_PATH": str(tmp_path)})
    rows = {r["name"]: r for r in json.loads(result.output)}
    assert rows["planted"]["tasks"] == 2


def test_tasks_table_and_json(runner: CliRunner) -> None:
    table = runner.invoke(app, ["tasks", "kernelbench"], env=WIDE)
    assert table.exit_code == 0, table.output
    assert "level1_1_square_matmul" in table.output and "137.4 GFLOP" in table.output
    rows = {r["id"]: r for r in json.loads(runner.invoke(app, ["tasks", "kernelbench", "--json"]).output)}
    square = rows["level1_1_square_matmul"]
    assert square["level"] == 1 and square["dtype"] == "float32"
    assert square["flops"] == 2 * 4096**3 and square["has_solution"] is True
    assert rows["level2_1_gemm_bias_relu"]["category"] == "gemm-epilogue"


def test_check_passes_demo(runner: CliRunner) -> None:
    result = runner.invoke(app, ["suites", "check", "demo"])
    assert result.exit_code == 0, result.output
    assert "4 task(s) checked: 0 refused" in result.output


def test_check_refuses_planted_task_with_one_line_per_issue(runner: CliRunner, tmp_path: Path) -> None:
    root = _planted_suite(tmp_path / "planted")
    result = runner.invoke(app, ["suites", "check", str(root)])
    assert result.exit_code == 1, result.output
    issue_lines = [line for line in result.output.splitlines() if line.startswith("planted/")]
    assert any("flat" in line and "constant-output" in line and "error" in line for line in issue_lines), result.output
    assert not any(line.startswith("planted/error: good") for line in issue_lines)
    assert "1 refused" in result.output
    as_json = json.loads(runner.invoke(app, ["suites", "check", str(root), "--json"]).output)
    assert {(i["task"], i["code"]) for i in as_json if i["severity"] == "error"} == {("flat", "constant-output")}


def test_check_single_task(runner: CliRunner, tmp_path: Path) -> None:
    root = _planted_suite(tmp_path / "planted")
    result = runner.invoke(app, ["suites", "check", str(root), "--task", "good"])
    assert result.exit_code == 0, result.output
    assert "1 task(s) checked: 0 refused" in result.output


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "orchestrator.cli", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=120)


def test_unknown_suite_is_exit_2_with_one_line() -> None:
    proc = _cli("tasks", "no-such-suite")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no suite 'no-such-suite'")
    assert "kernelarena suites" in lines[0]


def test_unknown_task_in_check_is_a_user_error(runner: CliRunner) -> None:
    """Raised as the loader's user error, which cli.main turns into exit 2 (checked above)."""
    result = runner.invoke(app, ["suites", "check", "demo", "--task", "nope"])
    assert isinstance(result.exception, ScorerUserError)
    assert str(result.exception).startswith("suite 'demo' has no task 'nope'")
    several = runner.invoke(app, ["suites", "check", "demo", "kernelbench", "--task", "nope"])
    assert isinstance(several.exception, UserError) and "no checked suite" in str(several.exception)
