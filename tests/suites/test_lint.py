"""The suite linter passes the shipped suites and refuses planted degenerate tasks.

Planted tasks are real KernelBench-format files written into a temporary suite folder and
linted through the same loader the scorer uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorer.errors import ScorerUserError
from scorer.tasks.lint import LintIssue, lint_suite
from scorer.tasks.suites import load_suite

TASK_TEMPLATE = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        {body}


batch_size = 4096
dim = 4096


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]
'''

# forward bodies: each a different way for a task to be a non-test.
PLANTED = {
    "good": "return torch.tanh(x * self.weight)",
    "constant": "return torch.zeros_like(x) + 3.0",
    "near_constant": "return 5.0 + 1e-6 * x",
    "tiny_spread": "return 1e6 + 1e-2 * x",
    "ignores_input": "return (self.weight * 2.0).expand(x.shape[0], -1).contiguous()",
    "mostly_ignores_input": "y = (self.weight * 2.0).expand(x.shape[0], -1).clone(); y[0, 0] = x[0, 0]; return y",
    "random_in_forward": "return x + torch.rand_like(x)",
    "nonfinite": "return x / 0.0",
    "raises": "raise RuntimeError('boom')",
    "exact_constant": "return torch.zeros(x.shape[0], dtype=torch.int64)",
}


def _write_suite(root: Path, bodies: dict[str, str], *, manifest_extra: str = "", flops: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    lines = ['name = "planted"', 'description = "degenerate tasks for the linter test"', ""]
    for task_id, body in bodies.items():
        (root / f"{task_id}.py").write_text(TASK_TEMPLATE.format(body=body), encoding="utf-8")
        lines += [f"[tasks.{task_id}]", "level = 1", 'category = "test"', 'dtype = "float32"']
        if flops:
            lines += ["flops = 100", "bytes = 100"]
        lines += ["test_shapes = { batch_size = 8, dim = 32 }", ""]
        solution = root / "solutions" / task_id / "kernel.py"
        solution.parent.mkdir(parents=True, exist_ok=True)
        solution.write_text("class ModelNew:\n    pass\n", encoding="utf-8")
    (root / "suite.toml").write_text("\n".join(lines) + manifest_extra, encoding="utf-8")
    return root


def _codes(issues: list[LintIssue], task: str) -> set[str]:
    return {i.code for i in issues if i.task == task}


@pytest.fixture(scope="module")
def planted_issues(tmp_path_factory: pytest.TempPathFactory) -> list[LintIssue]:
    root = _write_suite(tmp_path_factory.mktemp("planted") / "planted", PLANTED)
    return lint_suite(load_suite(root))


def test_demo_suite_passes() -> None:
    issues = lint_suite(load_suite("demo"))
    assert [i for i in issues if i.refused] == []


def test_kernelbench_suite_passes() -> None:
    suite = load_suite("kernelbench")
    issues = lint_suite(suite)
    assert [i.line() for i in issues if i.refused] == []


def test_good_planted_task_is_clean(planted_issues: list[LintIssue]) -> None:
    assert _codes(planted_issues, "good") == set()


@pytest.mark.parametrize(
    ("task", "code"),
    [
        ("constant", "constant-output"),
        ("near_constant", "constant-output"),
        ("tiny_spread", "constant-output"),  # rtol 1e-3 of 1e6 swallows the spread
        ("ignores_input", "input-insensitive"),
        ("mostly_ignores_input", "input-insensitive"),
        ("random_in_forward", "nondeterministic"),
        ("nonfinite", "nonfinite-output"),
        ("raises", "reference-failed"),
        ("exact_constant", "constant-output"),
    ],
)
def test_degenerate_task_is_refused(planted_issues: list[LintIssue], task: str, code: str) -> None:
    found = [i for i in planted_issues if i.task == task]
    assert code in {i.code for i in found}, found
    assert all(i.refused for i in found if i.code == code)
    assert task in next(i.line() for i in found if i.code == code)


def test_near_constant_under_a_tight_rule(tmp_path: Path) -> None:
    """With rtol = atol = 0 no constant passes, but a spread of a few float32 ulps around
    1e6 is still no test of a kernel."""
    root = _write_suite(tmp_path / "s", {"tiny_spread": PLANTED["tiny_spread"], "good": PLANTED["good"]},
                        manifest_extra="\n[correctness]\nrtol = 0.0\natol = 0.0\n")
    issues = lint_suite(load_suite(root))
    assert _codes(issues, "tiny_spread") == {"near-constant-output"}
    assert _codes(issues, "good") == set()


def test_structural_problems(tmp_path: Path) -> None:
    root = _write_suite(tmp_path / "s", {"ok": PLANTED["good"], "no_inputs": PLANTED["good"]}, flops=False)
    (root / "no_inputs.py").write_text(
        (root / "no_inputs.py").read_text().replace("def get_inputs():", "def make_inputs():")
    )
    (root / "solutions" / "ok" / "kernel.py").unlink()
    issues = lint_suite(load_suite(root))
    assert _codes(issues, "no_inputs") >= {"missing-definition", "missing-roofline"}
    assert {i.severity for i in issues if i.code == "missing-roofline"} == {"warning"}
    ok_codes = _codes(issues, "ok")
    assert ok_codes == {"missing-roofline", "missing-solution"}
    assert not any(i.refused for i in issues if i.task == "ok")


def test_unknown_shape_key_and_missing_modelnew(tmp_path: Path) -> None:
    root = _write_suite(tmp_path / "s", {"typo": PLANTED["good"]})
    manifest = root / "suite.toml"
    manifest.write_text(manifest.read_text().replace("batch_size = 8", "batchsize = 8"))
    (root / "solutions" / "typo" / "kernel.py").write_text("class Model:\n    pass\n")
    issues = lint_suite(load_suite(root))
    assert _codes(issues, "typo") == {"unknown-shape-key", "solution-no-modelnew"}


def test_task_without_test_shapes_is_not_run_unless_asked(tmp_path: Path) -> None:
    root = _write_suite(tmp_path / "s", {"constant": PLANTED["constant"]})
    manifest = root / "suite.toml"
    manifest.write_text(manifest.read_text().replace("test_shapes = { batch_size = 8, dim = 32 }", ""))
    (root / "constant.py").write_text((root / "constant.py").read_text().replace("4096", "16"))
    suite = load_suite(root)
    assert _codes(lint_suite(suite), "constant") == {"no-test-shapes"}
    assert "constant-output" in _codes(lint_suite(suite, full_size=True), "constant")


def test_plain_folder_suite_is_linted(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "rand.py").write_text(TASK_TEMPLATE.format(body=PLANTED["random_in_forward"]).replace("4096", "16"))
    issues = lint_suite(load_suite(root), full_size=True)
    assert "nondeterministic" in _codes(issues, "rand")
    # A plain folder has no manifest, so no roofline data is expected of it.
    assert "missing-roofline" not in _codes(issues, "rand")


def test_unknown_task_name_is_a_user_error() -> None:
    with pytest.raises(ScorerUserError, match="kernelarena tasks"):
        lint_suite(load_suite("demo"), tasks=["nope"])
