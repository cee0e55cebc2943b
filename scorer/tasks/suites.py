"""Suite and task loading (standard library only).

A suite is a folder. With a ``suite.toml`` it carries rules and per-task metadata; without one,
every ``*.py`` file in it is a KernelBench-format task and defaults apply, so KernelBench's own
problem folders work unchanged: the task id is the file stem (``23_Softmax``), a folder named
``level<N>`` gives its tasks level N, and ``KernelBench/level1`` is the suite ``kernelbench-level1``.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorer.errors import ScorerUserError
from scorer.tasks.rubric import Rubric

BUILTIN_SUITES_DIR = Path(__file__).resolve().parents[2] / "suites"
DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-3


@dataclass(frozen=True)
class Tolerance:
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    exact: bool = False
    # Same inputs twice must give bit-identical outputs. A suite whose honest solutions may use
    # float atomics (split-K, scatter-add) sets it false: a difference inside the tolerance is
    # then flagged for audit instead of rejected.
    deterministic: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"rtol": self.rtol, "atol": self.atol, "exact": self.exact, "deterministic": self.deterministic}


@dataclass(frozen=True)
class TimingRule:
    warmup: int = 10
    repetitions: int = 100
    flush_l2: bool = True
    # Accepted and ignored, so manifests that set it still load: every timed repetition draws fresh
    # inputs of its own.
    input_sets: int = 4


@dataclass(frozen=True)
class LibraryPolicy:
    """Which library compute calls a solution may make (the `baseline-library-call` rule)."""

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    # The share of forward's work the solution's own kernels must do (scorer/checks/work.py).
    own_work_share: float = 0.5

    def to_dict(self) -> dict[str, Any]:
        return {"allow": list(self.allow), "deny": list(self.deny), "own_work_share": self.own_work_share}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> LibraryPolicy:
        data = data or {}
        share = data.get("own_work_share", 0.5)
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= float(share) <= 1.0:
            raise ValueError(f"[policy] own_work_share must be a number between 0 and 1, got {share!r}")
        return cls(allow=tuple(str(x) for x in data.get("allow", ())), deny=tuple(str(x) for x in data.get("deny", ())),
                   own_work_share=float(share))


@dataclass(frozen=True)
class IndexOutput:
    output: int
    input: int
    dim: int = -1

    def to_dict(self) -> dict[str, int]:
        return {"output": self.output, "input": self.input, "dim": self.dim}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> IndexOutput:
        unknown = set(data) - {"output", "input", "dim"}
        if unknown or "output" not in data or "input" not in data:
            raise ValueError(f"index_outputs entries are {{ output = N, input = N, dim = N }}, got {dict(data)!r}")
        values = {k: data[k] for k in ("output", "input", "dim") if k in data}
        if any(isinstance(v, bool) or not isinstance(v, int) for v in values.values()):
            raise ValueError(f"index_outputs: output, input and dim are integers, got {dict(data)!r}")
        if values["output"] < 0 or values["input"] < 0:
            raise ValueError(f"index_outputs: output and input count from 0, got {dict(data)!r}")
        return cls(**values)


@dataclass(frozen=True)
class Task:
    id: str
    path: Path
    level: int | None = None
    category: str | None = None
    dtype: str | None = None
    tolerance: Tolerance = Tolerance()
    flops: float | None = None
    bytes_moved: float | None = None
    # Module globals overridden for CPU tests (small shapes); KernelBench files read their
    # sizes from module-level constants, so overriding them resizes get_inputs().
    test_shapes: dict[str, Any] = field(default_factory=dict)
    # Extra shape variants the scorer also verifies on (shape-specialization check).
    alt_shapes: tuple[dict[str, Any], ...] = ()
    # Variants for full-size runs (GPU): alt_shapes are sized against test_shapes, and a variant
    # smaller than the full shape cannot expose a kernel that froze the full shape's width.
    full_alt_shapes: tuple[dict[str, Any], ...] = ()
    cuda_only: bool = False
    solution: Path | None = None
    # What the task asks beyond a correct answer (scorer/checks/rubric.py); None: no rubric.
    rubric: Rubric | None = None
    # Outputs that hold indices into an input (top-k, argmax): compared modulo ties.
    index_outputs: tuple[IndexOutput, ...] = ()

    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")


@dataclass(frozen=True)
class Suite:
    name: str
    root: Path
    description: str = ""
    targets: tuple[str, ...] = ("cuda", "cpu")
    tolerance: Tolerance = Tolerance()
    timing: TimingRule = TimingRule()
    baseline: str = "eager"
    policy: LibraryPolicy = LibraryPolicy()
    tasks: dict[str, Task] = field(default_factory=dict)
    has_manifest: bool = False

    def task(self, task_id: str) -> Task:
        try:
            return self.tasks[task_id]
        except KeyError:
            known = ", ".join(sorted(self.tasks)[:8])
            # A plain folder's name is not on the search path: list it by its folder.
            listing = self.name if self.has_manifest else str(self.root)
            raise ScorerUserError(
                f"suite '{self.name}' has no task '{task_id}'; "
                f"run `kernelarena tasks {listing}` to list them (e.g. {known})"
            ) from None


def suite_search_path() -> list[Path]:
    extra = os.environ.get("KERNELARENA_SUITES_PATH", "")
    return [Path(p) for p in extra.split(os.pathsep) if p] + [BUILTIN_SUITES_DIR]


def list_suites() -> list[Suite]:
    seen: dict[str, Suite] = {}
    for base in suite_search_path():
        if not base.is_dir():
            continue
        for child in sorted(base.iterdir()):
            if (child / "suite.toml").is_file() and child.name not in seen:
                seen[child.name] = load_suite(child)
    return list(seen.values())


def resolve_suite_dir(name_or_path: str | os.PathLike[str]) -> Path:
    candidate = Path(name_or_path)
    if candidate.is_dir():
        return candidate.resolve()
    if os.sep not in str(name_or_path):
        for base in suite_search_path():
            if (base / str(name_or_path)).is_dir():
                return (base / str(name_or_path)).resolve()
    raise ScorerUserError(
        f"no suite '{name_or_path}': give a suite name from `kernelarena suites` "
        "or the path of a folder of KernelBench task files"
    )


def load_suite(name_or_path: str | os.PathLike[str]) -> Suite:
    root = resolve_suite_dir(name_or_path)
    manifest_path = root / "suite.toml"
    if not manifest_path.is_file():
        return _plain_folder_suite(root)
    try:
        data = tomllib.loads(manifest_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ScorerUserError(f"{manifest_path}: invalid TOML ({exc}); fix the file") from None
    return _manifest_suite(root, data, manifest_path)


_LEVEL_FOLDER = re.compile(r"level([1-9][0-9]*)", re.IGNORECASE)


def folder_level(root: Path) -> int | None:
    """The level a plain folder's name gives its tasks: KernelBench's `level1` .. `level4`
    (any `level<N>`), else None."""
    match = _LEVEL_FOLDER.fullmatch(root.name)
    return int(match.group(1)) if match else None


def plain_suite_name(root: Path) -> str:
    """Name of a plain folder suite: `kernelbench-level1` for KernelBench's own `KernelBench/level1`
    (parent folder named KernelBench, any case), else the folder's own name."""
    if root.parent.name.lower() == "kernelbench" and root.parent != root:
        return f"kernelbench-{root.name}".lower()
    return root.name


def task_files(root: Path) -> list[Path]:
    """The task files of a plain folder: every `*.py` not starting with `_`, sorted by name."""
    return sorted(p for p in root.glob("*.py") if p.is_file() and not p.name.startswith("_"))


def _plain_folder_suite(root: Path) -> Suite:
    level = folder_level(root)
    tasks = {}
    for path in task_files(root):
        # Optional, as in a manifest suite: solutions/<task>/kernel.py (upstream folders have none).
        solution = root / "solutions" / path.stem / "kernel.py"
        tasks[path.stem] = Task(id=path.stem, path=path, level=level,
                                solution=solution if solution.is_file() else None)
    if not tasks:
        raise ScorerUserError(f"{root} holds no suite.toml and no task .py files; point at a suite folder")
    return Suite(name=plain_suite_name(root), root=root, tasks=tasks)


def _tolerance(section: dict[str, Any], default: Tolerance) -> Tolerance:
    return Tolerance(
        rtol=float(section.get("rtol", default.rtol)),
        atol=float(section.get("atol", default.atol)),
        exact=bool(section.get("exact", default.exact)),
        deterministic=bool(section.get("deterministic", default.deterministic)),
    )


def _manifest_suite(root: Path, data: dict[str, Any], manifest_path: Path) -> Suite:
    known_top = {"name", "description", "targets", "correctness", "timing", "baseline", "policy", "tasks"}
    unknown = set(data) - known_top
    if unknown:
        raise ScorerUserError(f"{manifest_path}: unknown key(s) {sorted(unknown)}; allowed: {sorted(known_top)}")
    tolerance = _tolerance(data.get("correctness", {}), Tolerance())
    timing_data = data.get("timing", {})
    timing = TimingRule(
        warmup=int(timing_data.get("warmup", TimingRule.warmup)),
        repetitions=int(timing_data.get("repetitions", TimingRule.repetitions)),
        flush_l2=bool(timing_data.get("flush_l2", TimingRule.flush_l2)),
        input_sets=int(timing_data.get("input_sets", TimingRule.input_sets)),
    )
    baseline = str(data.get("baseline", "eager"))
    if baseline not in ("eager", "compile"):
        raise ScorerUserError(f"{manifest_path}: baseline must be 'eager' or 'compile', not '{baseline}'")
    try:
        policy = LibraryPolicy.from_dict(data.get("policy", {}))
    except ValueError as exc:
        raise ScorerUserError(f"{manifest_path}: {exc}") from None
    tasks: dict[str, Task] = {}
    for task_id, entry in data.get("tasks", {}).items():
        path = root / entry.get("file", f"{task_id}.py")
        if not path.is_file():
            raise ScorerUserError(f"{manifest_path}: task '{task_id}' points at missing file {path.name}")
        solution = root / "solutions" / task_id / "kernel.py"
        try:
            rubric = Rubric.from_entry(entry)
            index_outputs = tuple(IndexOutput.from_dict(io) for io in entry.get("index_outputs", ()))
        except (ValueError, TypeError) as exc:
            raise ScorerUserError(f"{manifest_path}: task '{task_id}': {exc}") from None
        tasks[task_id] = Task(
            id=task_id,
            path=path,
            level=entry.get("level"),
            category=entry.get("category"),
            dtype=entry.get("dtype"),
            tolerance=_tolerance(entry, tolerance),
            flops=entry.get("flops"),
            bytes_moved=entry.get("bytes"),
            test_shapes=dict(entry.get("test_shapes", {})),
            alt_shapes=tuple(dict(s) for s in entry.get("alt_shapes", ())),
            full_alt_shapes=tuple(dict(s) for s in entry.get("full_alt_shapes", ())),
            cuda_only=bool(entry.get("cuda_only", False)),
            solution=solution if solution.is_file() else None,
            rubric=None if rubric.empty else rubric,
            index_outputs=index_outputs,
        )
    return Suite(
        name=str(data.get("name", root.name)),
        root=root,
        description=str(data.get("description", "")),
        targets=tuple(data.get("targets", ("cuda", "cpu"))),
        tolerance=tolerance,
        timing=timing,
        baseline=baseline,
        policy=policy,
        tasks=tasks,
        has_manifest=True,
    )
