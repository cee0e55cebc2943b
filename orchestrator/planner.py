"""Expands a sweep spec into trials: models x suites x tasks x samples.

Trial ids are stable (`suite/task/model/sample`), so a resumed sweep, the ledger and the index
all agree on what a trial is, whatever order they were planned in.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from kernelarena.errors import ConfigError
from orchestrator.spec import SuiteSelection, SweepSpec
from scorer.errors import ScorerUserError
from scorer.tasks.suites import load_suite, task_files


class ResolvedTask(BaseModel):
    """One task the sweep runs, as frozen into `tasks.json`."""

    suite: str
    suite_root: str
    task: str
    level: int | None = None
    category: str | None = None


@dataclass(frozen=True)
class PlannedTrial:
    trial_id: str
    suite: str
    suite_root: str
    task: str
    model: str
    """Model name (the spec's `name`, by default its id)."""
    model_id: str
    sample: int
    rel_dir: str
    """Folder of the trial's files relative to the sweep folder."""

    @property
    def provider(self) -> str:
        return self.model_id.partition(":")[0]


def safe_name(model_name: str) -> str:
    """Filesystem-safe form of a model name: `anthropic:claude-opus-4-6` -> `anthropic_claude-opus-4-6`."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model_name).strip("._") or "model"


def safe_names(model_names: list[str]) -> dict[str, str]:
    """Map each model name to a distinct safe folder name (suffixes break rare collisions)."""
    mapping: dict[str, str] = {}
    used: set[str] = set()
    for name in model_names:
        base = candidate = safe_name(name)
        n = 2
        while candidate in used:
            candidate = f"{base}-{n}"
            n += 1
        used.add(candidate)
        mapping[name] = candidate
    return mapping


def _where(selection: SuiteSelection, index: int) -> str:
    return f"suites.{selection.name}" if selection.name is not None else f"suites.{index}.path"


def _check_folder(selection: SuiteSelection, where: str) -> None:
    """A `path` suite must be a folder holding a suite.toml or KernelBench-format task files."""
    folder = Path(str(selection.path))
    if not folder.exists():
        raise ConfigError(f"{where}: no folder at {folder}; fix the path (a relative one is read from the spec file's folder)")
    if not folder.is_dir():
        raise ConfigError(f"{where}: {folder} is a file, not a folder; give the folder that holds the task files")
    if not (folder / "suite.toml").is_file() and not task_files(folder):
        raise ConfigError(
            f"{where}: {folder} holds no task .py files and no suite.toml; "
            "point at a folder of KernelBench-format problems such as KernelBench/level1"
        )


def _select(selection: SuiteSelection, index: int = 0) -> list[ResolvedTask]:
    where = _where(selection, index)
    if selection.path is not None:
        _check_folder(selection, where)
    try:
        suite = load_suite(selection.target)
    except ScorerUserError as exc:
        raise ConfigError(f"suites: {exc}") from None
    listing = selection.target if selection.name is not None else str(suite.root)
    for pattern in selection.include + selection.exclude:
        if not any(fnmatch.fnmatchcase(t, pattern) for t in suite.tasks):
            raise ConfigError(
                f"{where}: pattern '{pattern}' matches no task; "
                f"run `kernelarena tasks {listing}` to list them"
            )
    chosen = []
    for task_id, task in suite.tasks.items():
        if not any(fnmatch.fnmatchcase(task_id, p) for p in selection.include):
            continue
        if any(fnmatch.fnmatchcase(task_id, p) for p in selection.exclude):
            continue
        level = selection.level if selection.level is not None else task.level
        if selection.levels and level not in selection.levels:
            continue
        chosen.append(
            ResolvedTask(suite=suite.name, suite_root=str(suite.root), task=task_id,
                         level=level, category=task.category)
        )
    if not chosen:
        raise ConfigError(f"{where}: the filters leave no task; loosen include/exclude/levels")
    return chosen


def resolve_tasks(spec: SweepSpec) -> list[ResolvedTask]:
    tasks: dict[tuple[str, str], ResolvedTask] = {}
    roots: dict[str, str] = {}
    for index, selection in enumerate(spec.suites):
        for task in _select(selection, index):
            # Trial ids carry the suite name, so one name must mean one folder.
            other = roots.setdefault(task.suite, task.suite_root)
            if other != task.suite_root:
                raise ConfigError(
                    f"suites: two folders are both suite '{task.suite}' ({other} and {task.suite_root}); "
                    "trial ids need distinct suite names, so rename one folder or drop one selection"
                )
            tasks.setdefault((task.suite, task.task), task)
    return list(tasks.values())


def plan(spec: SweepSpec, tasks: list[ResolvedTask]) -> list[PlannedTrial]:
    """Trials ordered sample-major then task then model, so early results cover every model."""
    folders = safe_names([m.name for m in spec.models])
    task_names = [t.task for t in tasks]
    trials = []
    for sample in range(spec.samples):
        for task in tasks:
            # The published layout is solutions/<task>/<model>/; only a task id shared by two
            # suites needs the suite in its folder name.
            task_dir = task.task if task_names.count(task.task) == 1 else f"{task.suite}__{task.task}"
            for model in spec.models:
                rel = f"solutions/{task_dir}/{folders[model.name]}"
                if spec.samples > 1:
                    rel += f"/{sample}"
                trials.append(
                    PlannedTrial(
                        trial_id=f"{task.suite}/{task.task}/{model.name}/{sample}",
                        suite=task.suite,
                        suite_root=task.suite_root,
                        task=task.task,
                        model=model.name,
                        model_id=model.id,
                        sample=sample,
                        rel_dir=rel,
                    )
                )
    return trials
