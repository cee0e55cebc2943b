"""Upstream KernelBench problem folders work as suites unchanged: a plain folder of problem files
(no suite.toml) scores through the CLI, its `level<N>` name gives the level, `KernelBench/levelN`
gets a clear suite name, and upstream file names are task ids.

The problems under tests/suites/kernelbench_format/level1/ are written for these tests in the
upstream format (Model, module-level sizes, get_inputs, get_init_inputs) at CPU sizes; the
full-size folder benchmarks/kernelbench_full/ (published sizes, for the GPU check) is scored
here at small sizes by overriding its module constants, as the scorer does with test_shapes."""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scorer.errors import ScorerUserError
from scorer.tasks.suites import Suite, folder_level, load_suite, plain_suite_name
from tests.scorer.conftest import score_file

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "tests" / "suites" / "kernelbench_format" / "level1"
FULL = REPO / "benchmarks" / "kernelbench_full"
TASKS = ["19_ReLU", "1_Square_matrix_multiplication_", "23_Softmax", "36_RMSNorm_"]
KERNELARENA = [sys.executable, "-c", "from orchestrator.cli import main; main()"]
FAST = ["--device", "cpu", "--repetitions", "2", "--warmup", "1", "--seeds", "2"]


def _copy_problems(dest: Path) -> Path:
    """The test problems (no solutions) in another folder, as a user would lay them out."""
    dest.mkdir(parents=True)
    for task in TASKS:
        shutil.copy(FOLDER / f"{task}.py", dest / f"{task}.py")
    return dest


def run(args: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TRITON_INTERPRET="1")
    return subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def test_plain_folder_is_a_suite_with_level_and_upstream_ids() -> None:
    suite = load_suite(FOLDER)
    assert not suite.has_manifest and suite.root == FOLDER
    assert sorted(suite.tasks) == sorted(TASKS)
    assert {t.level for t in suite.tasks.values()} == {1}
    assert suite.name == "level1"  # parent folder is not KernelBench
    task = suite.task("1_Square_matrix_multiplication_")
    assert task.path.name == "1_Square_matrix_multiplication_.py"
    # solutions/<task>/kernel.py beside the problems is found, as in a manifest suite.
    assert all(t.solution is not None for t in suite.tasks.values())


def test_kernelbench_parent_names_the_suite(tmp_path: Path) -> None:
    for parent in ("KernelBench", "kernelbench"):
        root = _copy_problems(tmp_path / parent / "level2")
        suite = load_suite(root)
        assert suite.name == "kernelbench-level2"
        assert {t.level for t in suite.tasks.values()} == {2}
        assert all(t.solution is None for t in suite.tasks.values())  # upstream folders ship none
    other = _copy_problems(tmp_path / "mine" / "problems")
    suite = load_suite(other)
    assert suite.name == "problems" and {t.level for t in suite.tasks.values()} == {None}


@pytest.mark.parametrize("name, level", [("level1", 1), ("level4", 4), ("Level3", 3), ("level12", 12),
                                         ("level0", None), ("level", None), ("level1_extra", None), ("mylevel1", None)])
def test_folder_level(name: str, level: int | None) -> None:
    assert folder_level(Path("/x") / name) == level


def test_plain_suite_name() -> None:
    assert plain_suite_name(Path("/data/KernelBench/level1")) == "kernelbench-level1"
    assert plain_suite_name(Path("/data/KernelBench/KernelBench/level3")) == "kernelbench-level3"
    assert plain_suite_name(Path("/data/bench/level1")) == "level1"


def test_unknown_task_names_the_folder_to_list() -> None:
    with pytest.raises(ScorerUserError, match=f"kernelarena tasks {FOLDER}"):
        load_suite(FOLDER).task("23_softmax")


def test_cli_scores_upstream_folder_passed(tmp_path: Path) -> None:
    root = _copy_problems(tmp_path / "KernelBench" / "level1")
    kernel = FOLDER / "solutions" / "23_Softmax" / "kernel.py"
    proc = run(KERNELARENA + ["score", "--suite", str(root), "--task", "23_Softmax", "--kernel", str(kernel),
                              "--json", *FAST])
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["verdict"] == "passed", data["error"]
    assert data["suite"] == "kernelbench-level1" and data["task"] == "23_Softmax"
    assert data["hacks"] == [] and data["timing"]["speedup"] > 0


@pytest.mark.parametrize("task", ["19_ReLU", "1_Square_matrix_multiplication_", "36_RMSNorm_"])
def test_cli_scores_each_test_problem_passed(task: str) -> None:
    kernel = FOLDER / "solutions" / task / "kernel.py"
    proc = run(KERNELARENA + ["score", "--suite", str(FOLDER), "--task", task, "--kernel", str(kernel),
                              "--json", "--skip-timing", *FAST])
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["verdict"] == "passed", data["error"]
    assert data["hacks"] == [] and data["correctness"]["passed"] == data["correctness"]["trials"]


def test_cli_unknown_task_in_folder_is_one_line_exit_2() -> None:
    proc = run(KERNELARENA + ["score", "--suite", str(FOLDER), "--task", "99_Nope", "--kernel", "k.py"])
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "99_Nope" in lines[0]


def test_cli_folder_without_tasks_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "level1").mkdir()
    proc = run(KERNELARENA + ["score", "--suite", str(tmp_path / "level1"), "--task", "x", "--kernel", "k.py"])
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no task .py files" in proc.stderr


# ---- the full-size folder for the GPU check --------------------------------------------------

def _constants(path: Path) -> dict[str, object]:
    """Module-level integer constants, read without running the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.targets[0].id: node.value.value for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)}


def test_full_size_folder_holds_the_published_sizes() -> None:
    suite = load_suite(FULL / "level1")
    assert sorted(suite.tasks) == ["23_Softmax", "36_RMSNorm_"]
    assert {t.level for t in suite.tasks.values()} == {1}
    assert _constants(FULL / "level1" / "23_Softmax.py") == {"batch_size": 4096, "dim": 393216}
    assert _constants(FULL / "level1" / "36_RMSNorm_.py") == {"batch_size": 112, "features": 64, "dim1": 512, "dim2": 512}


def _resized(suite: Suite, task_id: str, shapes: dict[str, object], alts: list[dict[str, object]]) -> Suite:
    task = dataclasses.replace(suite.tasks[task_id], test_shapes=shapes, alt_shapes=tuple(alts))
    return dataclasses.replace(suite, tasks={**suite.tasks, task_id: task})


@pytest.mark.parametrize("task_id, shapes, alts", [
    # Rows wider than one 4096 block and not a multiple of it, so the online loop runs and masks.
    ("23_Softmax", {"batch_size": 6, "dim": 9000}, [{"batch_size": 3, "dim": 4096 * 2 + 17}]),
    # The published 64 features over few positions; alt: a feature count that is not a power of 2.
    ("36_RMSNorm_", {"batch_size": 2, "features": 64, "dim1": 16, "dim2": 24},
     [{"batch_size": 3, "features": 24, "dim1": 7, "dim2": 9}]),
])
def test_full_size_solutions_pass_at_small_sizes(task_id: str, shapes: dict[str, object], alts: list[dict[str, object]]) -> None:
    suite = _resized(load_suite(FULL / "level1"), task_id, shapes, alts)
    score = score_file(suite, task_id, FOLDER / "solutions" / task_id / "kernel.py", skip_timing=True, seeds=2)
    assert score.verdict == "passed", score.error
    assert score.hacks == []
    assert score.correctness is not None and score.correctness.passed == score.correctness.trials
