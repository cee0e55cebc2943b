"""`[[suites]] path = "..."` in a sweep spec: a folder of KernelBench-format problems (e.g. an
upstream `KernelBench/level1`) selected by path, planned into trials with a stable suite name,
its level inferred or labelled, and one-line errors for a bad folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kernelarena.errors import ConfigError
from orchestrator.planner import plan, resolve_tasks
from orchestrator.prepare import check_unchanged, freeze, load_frozen
from orchestrator.spec import load_spec, parse_spec
from tests.orchestrator.sweep_helpers import FAST_SCORE, cli

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "tests" / "suites" / "kernelbench_format" / "level1"
TASKS = ["19_ReLU", "1_Square_matrix_multiplication_", "23_Softmax", "36_RMSNorm_"]
MODELS = '[[models]]\nid = "scripted:reference"\n[[models]]\nid = "scripted:hacker"\n'


def _kernelbench(base: Path, level: str = "level1", solutions: bool = False) -> Path:
    """A copy of the test problems laid out like upstream: BASE/KernelBench/<level>/*.py."""
    root = base / "KernelBench" / level
    root.mkdir(parents=True)
    for task in TASKS:
        shutil.copy(FOLDER / f"{task}.py", root / f"{task}.py")
        if solutions:
            (root / "solutions" / task).mkdir(parents=True)
            shutil.copy(FOLDER / "solutions" / task / "kernel.py", root / "solutions" / task / "kernel.py")
    return root


def _write(path: Path, suites: str, extra: str = "") -> Path:
    path.write_text(f'name = "kb"\ngpus = "cpu"\n{MODELS}{suites}{extra}')
    return path


def test_path_suite_plans_trials_with_a_stable_suite_name(tmp_path: Path) -> None:
    root = _kernelbench(tmp_path / "data")
    (tmp_path / "specs").mkdir()
    spec_path = _write(tmp_path / "specs" / "kb.toml",
                       '[[suites]]\npath = "../data/KernelBench/level1"\ninclude = ["*_Soft*", "36_*", "1_*"]\n'
                       '[[suites]]\nname = "demo"\ninclude = ["swish"]\n')
    spec = load_spec(spec_path)
    assert spec.suites[0].path == str(root.resolve())  # relative to the spec file, not the cwd
    tasks = resolve_tasks(spec)
    kb = [t for t in tasks if t.suite == "kernelbench-level1"]
    assert sorted(t.task for t in kb) == ["1_Square_matrix_multiplication_", "23_Softmax", "36_RMSNorm_"]
    assert {t.level for t in kb} == {1} and {t.suite_root for t in kb} == {str(root.resolve())}
    trials = plan(spec, tasks)
    assert len(trials) == 4 * 2
    ids = {t.trial_id for t in trials}
    assert "kernelbench-level1/23_Softmax/scripted:reference/0" in ids
    assert "kernelbench-level1/1_Square_matrix_multiplication_/scripted:hacker/0" in ids
    assert "demo/swish/scripted:hacker/0" in ids
    t = next(t for t in trials if t.trial_id == "kernelbench-level1/36_RMSNorm_/scripted:reference/0")
    assert t.rel_dir == "solutions/36_RMSNorm_/scripted_reference" and t.suite_root == str(root.resolve())
    assert [x.trial_id for x in plan(spec, tasks)] == [x.trial_id for x in trials]


def test_frozen_path_spec_resumes_from_another_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _kernelbench(tmp_path)
    spec_path = _write(tmp_path / "kb.toml", '[[suites]]\npath = "KernelBench/level1"\n')
    spec = load_spec(spec_path)
    freeze(tmp_path / "sweep", spec, resolve_tasks(spec))
    frozen, tasks = load_frozen(tmp_path / "sweep")
    assert [t.suite for t in tasks] == ["kernelbench-level1"] * 4
    monkeypatch.chdir(REPO)
    check_unchanged(frozen, load_spec(spec_path), tmp_path / "sweep")  # same folder, same spec


def test_levels_filter_and_level_label(tmp_path: Path) -> None:
    root = _kernelbench(tmp_path, "level2")
    plain = tmp_path / "mine"
    shutil.copytree(root, plain)

    def tasks(suites: list[dict[str, object]]):
        return resolve_tasks(parse_spec({"name": "t", "models": [{"id": "scripted:reference"}], "suites": suites},
                                        "t.toml", base_dir=tmp_path))

    assert {t.level for t in tasks([{"path": "KernelBench/level2", "levels": [2]}])} == {2}
    with pytest.raises(ConfigError, match="filters leave no task"):
        tasks([{"path": "KernelBench/level2", "levels": [1]}])
    # A folder whose name says no level has none, unless the selection labels it.
    assert {t.level for t in tasks([{"path": "mine"}])} == {None}
    labelled = tasks([{"path": "mine", "level": 3, "levels": [3], "exclude": ["19_*"]}])
    assert {t.level for t in labelled} == {3} and len(labelled) == 3 and {t.suite for t in labelled} == {"mine"}


@pytest.mark.parametrize("suite, message", [
    ({"name": "demo", "path": "x"}, "exactly one of `name`"),
    ({"include": ["*"]}, "exactly one of `name`"),
    ({"name": "demo", "level": 1}, "`level` labels the tasks of a `path` suite"),
    ({"path": "x", "level": 0}, "suites.0.level"),
])
def test_bad_selection_is_a_config_error(suite: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        parse_spec({"name": "t", "models": [{"id": "scripted:reference"}], "suites": [suite]}, "t.toml")


def test_two_folders_with_one_suite_name_are_refused(tmp_path: Path) -> None:
    _kernelbench(tmp_path / "a")
    _kernelbench(tmp_path / "b")
    spec = parse_spec({"name": "t", "models": [{"id": "scripted:reference"}],
                       "suites": [{"path": "a/KernelBench/level1"}, {"path": "b/KernelBench/level1"}]},
                      "t.toml", base_dir=tmp_path)
    with pytest.raises(ConfigError, match="two folders are both suite 'kernelbench-level1'"):
        resolve_tasks(spec)


@pytest.mark.parametrize("case, expected", [
    ("missing", "no folder at"),
    ("empty", "holds no task .py files and no suite.toml"),
    ("file", "is a file, not a folder"),
    ("pattern", "matches no task; run `kernelarena tasks"),
])
def test_bad_path_is_one_line_exit_2_and_writes_nothing(case: str, expected: str, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "_helper.py").write_text("x = 1\n")  # underscore files are not tasks
    (tmp_path / "afile").write_text("")
    _kernelbench(tmp_path)
    suites = {
        "missing": '[[suites]]\npath = "no/such/level1"\n',
        "empty": '[[suites]]\npath = "empty"\n',
        "file": '[[suites]]\npath = "afile"\n',
        "pattern": '[[suites]]\npath = "KernelBench/level1"\ninclude = ["23_softmax"]\n',
    }[case]
    spec = _write(tmp_path / "spec.toml", suites)
    out = tmp_path / "sweep"
    proc = cli("sweep", str(spec), "--out", str(out), timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert expected in proc.stderr and "suites.0.path" in proc.stderr
    assert not out.exists()


@pytest.mark.slow
def test_sweep_over_a_path_suite_scores_in_the_process_sandbox(tmp_path: Path) -> None:
    """End to end: the scoring sandbox gets the plain folder under its own names, so the score
    carries the planner's suite name."""
    _kernelbench(tmp_path, solutions=True)
    out = tmp_path / "sweep"
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'name = "kbpath"\ngpus = "cpu"\nout = "{out}"\n[[models]]\nid = "scripted:reference"\n'
        '[[suites]]\npath = "KernelBench/level1"\ninclude = ["19_ReLU"]\n'
        '[sandbox]\nbackend = "process"\n[budget]\nmax_turns = 8\nwall_time_s = 240\n' + FAST_SCORE
    )
    proc = cli("sweep", str(spec), env={"TRITON_INTERPRET": "1"}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    score = json.loads((out / "solutions" / "19_ReLU" / "scripted_reference" / "score.json").read_text())
    assert score["verdict"] == "passed", score.get("error")
    assert score["suite"] == "kernelbench-level1" and score["task"] == "19_ReLU"
    index = json.loads((out / "index.json").read_text())
    assert "kernelbench-level1/19_ReLU/scripted:reference/0" in json.dumps(index)
