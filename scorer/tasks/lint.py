"""Suite linter: refuses tasks a kernel could pass without computing anything.

A benchmark task is only a test if its reference output depends on its inputs and is
reproducible. This module runs each task's reference on CPU at its small `test_shapes` and
refuses (severity "error") a task whose output is near-constant, insensitive to its inputs,
or different on two identical runs, plus structural problems (missing `Model`,
`get_inputs`, `get_init_inputs`, override keys naming no module constant). Missing FLOP/byte
counts and missing reference solutions are warnings.

Standard library and torch only: it is part of the scorer and executes task code.
"""

from __future__ import annotations

import ast
import itertools
import logging
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import torch

from scorer.errors import ScorerUserError
from scorer.tasks import load as taskload
from scorer.tasks.load import make_inputs
from scorer.tasks.suites import Suite, Task, Tolerance

log = logging.getLogger(__name__)

Severity = Literal["error", "warning"]

REQUIRED_NAMES = ("Model", "get_inputs", "get_init_inputs")
# Seeds for the input-sensitivity comparison; the model is built once with MODEL_SEED so
# only the inputs change between the two runs.
MODEL_SEED = 0
INPUT_SEEDS = (1, 2)
# A reference whose outputs move beyond tolerance in fewer than this share of elements when
# the inputs change is treated as input-insensitive: a kernel could hard-code the rest.
MIN_CHANGED_FRACTION = 0.01
# Output spread below this fraction of its magnitude counts as near-constant.
MIN_RELATIVE_SPREAD = 1e-3

_module_counter = itertools.count()


@dataclass(frozen=True)
class LintIssue:
    """One problem found in a suite; `task` is None for suite-wide issues."""

    task: str | None
    code: str
    severity: Severity
    message: str

    @property
    def refused(self) -> bool:
        return self.severity == "error"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        where = self.task or "<suite>"
        return f"{self.severity}: {where}: {self.code}: {self.message}"


class _TaskRefused(Exception):
    """Internal: stops the checks of one task at the first issue that makes the rest moot."""

    def __init__(self, issue: LintIssue):
        super().__init__(issue.message)
        self.issue = issue


def load_task_module(path: Path, overrides: Mapping[str, Any] | None = None) -> ModuleType:
    """The scorer's loader (a fresh, uniquely named module), refusing an override key that
    names no module-level constant: a typo in suite.toml would otherwise resize nothing."""
    name = f"_kernelarena_task_{path.stem}_{next(_module_counter)}"
    try:
        module = taskload.load_module(path, name)
    except ImportError:
        raise ScorerUserError(f"cannot import {path}: not a Python file; point the task at a .py file") from None
    for key, value in (overrides or {}).items():
        if not hasattr(module, key):
            raise ScorerUserError(
                f"{path.name}: shape override '{key}' names no module-level constant; "
                "fix test_shapes/alt_shapes in suite.toml"
            )
        setattr(module, key, value)
    return module


def run_model(model: torch.nn.Module, inputs: list[Any]) -> list[torch.Tensor]:
    """Forward without autograd; outputs flattened to a list of tensors."""
    with torch.no_grad():
        out = model(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for i, item in enumerate(outs):
        if not isinstance(item, torch.Tensor):
            raise TypeError(f"output {i} is a {type(item).__name__}, not a tensor")
    return outs


def outputs_close(a: torch.Tensor, b: torch.Tensor, tol: Tolerance) -> torch.Tensor:
    """Elementwise pass mask under the task's rule (exact, or |a-b| <= atol + rtol*|b|)."""
    if tol.exact or not (a.dtype.is_floating_point or a.dtype.is_complex):
        return a == b
    a64, b64 = a.double(), b.double()
    return (a64 - b64).abs() <= tol.atol + tol.rtol * b64.abs()


def lint_suite(
    suite: Suite, *, tasks: Iterable[str] | None = None, runtime: bool = True, full_size: bool = False
) -> list[LintIssue]:
    """Check every task (or the named ones).

    `runtime=False` skips running reference code. A task without test_shapes is run only
    with `full_size=True`: at its benchmark size a CPU run can take minutes.
    """
    issues: list[LintIssue] = []
    if not suite.tasks:
        issues.append(LintIssue(None, "empty-suite", "error",
                                f"suite '{suite.name}' defines no tasks; add [tasks.<id>] entries or task files"))
    selected = list(tasks) if tasks is not None else list(suite.tasks)
    for task_id in selected:
        task = suite.task(task_id)
        issues.extend(lint_task(task, runtime=runtime, full_size=full_size))
    return issues


def lint_task(task: Task, *, runtime: bool = True, full_size: bool = False) -> list[LintIssue]:
    issues = _manifest_issues(task)
    try:
        module = _structural_checks(task)
        if runtime and (task.test_shapes or full_size):
            issues.extend(_runtime_checks(task, module))
        elif runtime:
            issues.append(LintIssue(task.id, "no-test-shapes", "warning",
                                    "no test_shapes, so its reference was not run; add small module-constant "
                                    "overrides in suite.toml (or lint with --full-size)"))
    except _TaskRefused as refused:
        issues.append(refused.issue)
    log.debug("linted task %s: %d issue(s)", task.id, len(issues))
    return issues


def _manifest_issues(task: Task) -> list[LintIssue]:
    issues: list[LintIssue] = []
    if task.level is not None and task.level >= 1:
        missing = [k for k, v in (("flops", task.flops), ("bytes", task.bytes_moved)) if v is None]
        if missing:
            issues.append(LintIssue(task.id, "missing-roofline", "warning",
                                    f"no {' or '.join(missing)} in suite.toml; add them so speedups can be placed on a roofline"))
    if task.solution is None:
        issues.append(LintIssue(task.id, "missing-solution", "warning",
                                f"no reference solution; add solutions/{task.id}/kernel.py defining ModelNew"))
    else:
        issues.extend(_solution_shape_issues(task))
    return issues


def _solution_shape_issues(task: Task) -> list[LintIssue]:
    """ModelNew must exist; checked by parsing so no kernel code runs here."""
    assert task.solution is not None
    try:
        tree = ast.parse(task.solution.read_text(encoding="utf-8"), filename=str(task.solution))
    except SyntaxError as exc:
        return [LintIssue(task.id, "solution-syntax", "error", f"{task.solution}: {exc.msg} (line {exc.lineno})")]
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    if "ModelNew" not in classes:
        return [LintIssue(task.id, "solution-no-modelnew", "error", f"{task.solution} defines no class ModelNew")]
    return []


def _structural_checks(task: Task) -> ModuleType:
    try:
        module = load_task_module(task.path)
    except ScorerUserError:
        raise
    except Exception as exc:  # task code is untrusted input: any failure is the task's
        raise _TaskRefused(LintIssue(task.id, "import-failed", "error", f"{task.path.name} fails to import: {exc!r}")) from None
    missing = [name for name in REQUIRED_NAMES if not hasattr(module, name)]
    if missing:
        raise _TaskRefused(LintIssue(task.id, "missing-definition", "error",
                                     f"{task.path.name} does not define {', '.join(missing)} "
                                     "(KernelBench format needs all three)"))
    for label, shapes in [("test_shapes", task.test_shapes)] + [("alt_shapes", s) for s in task.alt_shapes]:
        unknown = sorted(k for k in shapes if not hasattr(module, k))
        if unknown:
            raise _TaskRefused(LintIssue(task.id, "unknown-shape-key", "error",
                                         f"{label} key(s) {unknown} name no module-level constant of {task.path.name}"))
    return module


def _reference_outputs(task: Task, shapes: Mapping[str, Any], input_seed: int, calls: int = 1) -> list[list[torch.Tensor]]:
    """Outputs of `calls` consecutive forwards of one model on (copies of) one input set.

    Consecutive calls are not reseeded: a forward that draws random numbers then gives two
    different answers, as it would in the scorer, where the kernel never shares its RNG.
    """
    module = load_task_module(task.path, shapes)
    model, _ = taskload.build_model(module, MODEL_SEED)
    model.eval()
    inputs = make_inputs(module, input_seed)
    copies = [[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs] for _ in range(calls)]
    return [run_model(model, c) for c in copies]


def _runtime_checks(task: Task, module: ModuleType) -> list[LintIssue]:
    del module  # each run re-imports so module-level state cannot leak between runs
    issues: list[LintIssue] = []
    try:
        first, again = _reference_outputs(task, task.test_shapes, INPUT_SEEDS[0], calls=2)
        (other,) = _reference_outputs(task, task.test_shapes, INPUT_SEEDS[1])
    except ScorerUserError:
        raise
    except Exception as exc:
        raise _TaskRefused(LintIssue(task.id, "reference-failed", "error", f"reference raises at test_shapes: {exc!r}")) from None
    tol = task.tolerance
    for index, (out, out_again, out_other) in enumerate(zip(first, again, other, strict=True)):
        label = f"output {index}" if len(first) > 1 else "output"
        issue = (
            _nonfinite(task, label, out)
            or _nondeterministic(task, label, out, out_again)
            or _near_constant(task, label, out, tol)
            or _input_insensitive(task, label, out, out_other, tol)
        )
        if issue is not None:
            issues.append(issue)
    for shapes in task.alt_shapes:
        try:
            _reference_outputs(task, shapes, INPUT_SEEDS[0])
        except Exception as exc:
            issues.append(LintIssue(task.id, "alt-shape-failed", "error", f"reference raises at alt_shapes {shapes}: {exc!r}"))
    return issues


def _nonfinite(task: Task, label: str, out: torch.Tensor) -> LintIssue | None:
    if out.dtype.is_floating_point and not bool(torch.isfinite(out).all()):
        return LintIssue(task.id, "nonfinite-output", "error",
                         f"{label} holds NaN or inf at test_shapes; no tolerance can judge a kernel against it")
    return None


def _nondeterministic(task: Task, label: str, out: torch.Tensor, out_again: torch.Tensor) -> LintIssue | None:
    if out.shape != out_again.shape or not torch.equal(out, out_again):
        return LintIssue(task.id, "nondeterministic", "error",
                         f"{label} differs between two runs on the same seed and inputs (random ops in forward?)")
    return None


def _near_constant(task: Task, label: str, out: torch.Tensor, tol: Tolerance) -> LintIssue | None:
    if out.numel() == 0:
        return LintIssue(task.id, "empty-output", "error", f"{label} is empty at test_shapes")
    values = out.double()
    if tol.exact or not out.dtype.is_floating_point:
        if bool((values == values.flatten()[0]).all()):
            return LintIssue(task.id, "constant-output", "error", f"{label} is one repeated value")
        return None
    mean = values.mean()
    if bool(outputs_close(torch.full_like(values, float(mean)), values, tol).all()):
        return LintIssue(task.id, "constant-output", "error",
                         f"a constant tensor equal to the {label}'s mean ({float(mean):.4g}) passes the tolerance")
    spread = float(values.std()) if values.numel() > 1 else 0.0
    if spread <= MIN_RELATIVE_SPREAD * float(values.abs().mean()):
        return LintIssue(task.id, "near-constant-output", "error",
                         f"{label} spread {spread:.3g} is under {MIN_RELATIVE_SPREAD:g} of its magnitude")
    return None


def _input_insensitive(task: Task, label: str, out: torch.Tensor, out_other: torch.Tensor, tol: Tolerance) -> LintIssue | None:
    if out.shape != out_other.shape:
        return None  # shape depends on the data: certainly not insensitive
    changed = 1.0 - float(outputs_close(out_other, out, tol).double().mean())
    if changed < MIN_CHANGED_FRACTION:
        return LintIssue(task.id, "input-insensitive", "error",
                         f"{label} stays within tolerance for {1 - changed:.1%} of elements when the inputs change")
    return None
