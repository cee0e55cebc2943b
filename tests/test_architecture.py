"""The rules docs/ARCHITECTURE.md states, checked on the source: which package may import which
(every top-level folder of Python has its rules, the scorer's sub-packages their order), what the
scorer and the suites may import at all, that nothing imports in a circle, that the scorer code a
kernel worker loads binds its scorer imports before any kernel runs, and that every third-party
import is a declared dependency (read from pyproject.toml, whatever is installed; provider SDKs as
extras whose install hint names them)."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest

from kernelarena.errors import UserError

ROOT = Path(__file__).resolve().parents[1]
# What pip installs.
SHIPPED = ("kernelarena", "orchestrator", "harnesses", "sandbox", "scorer")
# What serves the repository only: they may import anything of ours (benchmarks and scripts reuse
# the tests' fake servers and fixtures), and nothing shipped imports them.
TOOLS = ("benchmarks", "scripts", "tests")
# Task and solution files in KernelBench's format: they run inside the scorer's workers.
SUITES = "suites"
# Every top-level folder that holds Python, so a new one must be given its rules here.
FOLDERS = (*SHIPPED, *TOOLS, SUITES)
# Read for imports (tests/ holds kernels that are meant not to parse or import what does not exist;
# only what shipped code imports of it matters, and that is checked from the importing side).
SCANNED = (*SHIPPED, "benchmarks", "scripts", SUITES)

# Which of our packages each may import (the arrows point one way: orchestrator -> harnesses ->
# sandbox, orchestrator -> scorer, harnesses -> scorer for scoring a trial, all -> kernelarena).
MAY_IMPORT = {
    "kernelarena": {"kernelarena"},
    "sandbox": {"sandbox", "kernelarena"},
    "scorer": {"scorer"},
    "harnesses": {"harnesses", "sandbox", "scorer", "kernelarena"},
    "orchestrator": set(SHIPPED),
    "benchmarks": set(SHIPPED) | set(TOOLS),
    "scripts": set(SHIPPED) | set(TOOLS),
    "suites": set(),
}
# The scorer's rooms, left to right: a sub-package may import only those to its right. The public
# face (`scorer`, `scorer.__main__`) stands left of them all; the scorer's own top-level modules
# (score, options, errors, aggregate) are leaves right of them all, importing no sub-package.
SCORER_LAYERS = ("judge", "workers", "correctness", "checks", "gpu", "tasks")
SCORER_FACE = ("scorer", "scorer.__main__")
# The modules a kernel worker's own code starts from; everything they import at module level is
# loaded before kernel.py is.
KERNEL_WORKER_ROOTS = ("scorer.workers.entry", "scorer.workers.kernel_role")
# The imports inside functions of kernel-worker modules that stay there, and why none of them runs
# after kernel.py is loaded (a lookup in the module table then could find the kernel's module).
LAZY_BEFORE_THE_KERNEL = {
    "scorer.gpu.lock:device_lock_key": "torch: the harness imports the lock without torch; a kernel worker asks in setup",
    "scorer.gpu.contention:nvml_handle": "pynvml, optional: only the judge reads NVML",
    "scorer.gpu.interpreter_bf16:install": "the interpreter's modules, only where Triton is interpreted: installed in setup",
    "scorer.gpu.interpreter_bf16:_untimed_autotune": "called by install",
    "scorer.checks.static.rules:_derived_tensor_compute": "called once, at import",
    "scorer.workers.wall:_interpreter_dirs": "the wall is built before the task or the kernel exists",
    "scorer.workers.wall:_seccomp_filter": "pyseccomp, optional: the wall is built before the task or the kernel exists",
}
# The scorer runs inside any CUDA or ROCm PyTorch image with nothing added.
# numpy comes with every PyTorch image (and Triton's CPU interpreter computes with it).
SCORER_THIRD_PARTY = {"torch", "triton", "numpy"}
# Optional, imported inside try/except ImportError, and what is lost without them is recorded:
# the wall's seccomp filter (score.json `isolation`) and NVML's view of foreign GPU work.
SCORER_OPTIONAL = {"pyseccomp", "pynvml"}
# Extras a shipped module may import from; dev and browser only serve the tests.
NOT_FOR_SHIPPED_CODE = {"dev", "browser"}
# Import names whose distribution is named otherwise (read here, not from what is installed, so the
# check holds without the extras).
DISTRIBUTION_OF = {"google": "google-genai"}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    target: str  # the imported name, dotted (ours resolved to a module of ours)
    line: int
    function: str  # the enclosing function's name, "" at module level
    type_only: bool  # under `if TYPE_CHECKING:`


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in SCANNED for p in sorted((ROOT / pkg).rglob("*.py"))}


def _ours(name: str) -> str | None:
    """The module of ours `name` lives in (a module, or the package holding a name)."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in _modules():
            return ".".join(parts)
        parts.pop()
    return None


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = module.split(".")
        if not _modules()[module].name == "__init__.py":
            base = base[:-1]
        base = base[: len(base) - node.level + 1]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    if prefix.split(".")[0] not in FOLDERS:
        return [prefix]
    # `from pkg import submodule` imports the submodule; `from pkg import name` the package.
    return [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in _modules() else prefix for a in node.names]


def _walk(module: str, node: ast.AST, function: str, type_only: bool) -> Iterator[Import]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            for target in _targets(module, child):
                yield Import(module, target, child.lineno, function, type_only)
        yield from _walk(module, child, child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function,
                         type_only or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)))


@cache
def _imports() -> tuple[Import, ...]:
    found = []
    for module, path in _modules().items():
        with warnings.catch_warnings():  # a module's own invalid escapes are not this test's concern
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)  # what Python 3.11 calls an invalid escape
            tree = ast.parse(path.read_text(encoding="utf-8"))
        found += _walk(module, tree, "", False)
    return tuple(i for i in found if i.target.split(".")[0] != "__future__")


def _is_stdlib(name: str) -> bool:
    return name.split(".")[0] in sys.stdlib_module_names


def test_imports_point_one_way() -> None:
    wrong = [f"{i.module}:{i.line} imports {i.target}" for i in _imports()
             if i.target.split(".")[0] in FOLDERS and i.target.split(".")[0] not in MAY_IMPORT[i.module.split(".")[0]]]
    assert not wrong, "imports against the arrows in docs/ARCHITECTURE.md:\n" + "\n".join(wrong)


def _python_folders() -> set[str]:
    """Top-level folders holding Python that git tracks or would track: ignored output (a sweep's
    `runs/` after `make demo`, holding the models' kernel.py files) is not the project's code.
    Outside a git checkout, every folder with a .py file below it."""
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", "*.py"],
                                cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
        folders = {path.split("/")[0] for path in listed if "/" in path}
    except (OSError, subprocess.CalledProcessError):
        folders = {d.name for d in ROOT.iterdir() if d.is_dir() and not d.name.endswith(".egg-info")
                   and next(d.rglob("*.py"), None) is not None}
    return {name for name in folders if not name.startswith(".")}


def test_every_top_level_folder_of_python_has_rules() -> None:
    found = _python_folders()
    assert found - set(FOLDERS) == set(), "give each new folder its rules in FOLDERS and MAY_IMPORT"
    assert set(MAY_IMPORT) == set(FOLDERS) - {"tests"}


def _scorer_layer(module: str) -> int:
    """The scorer module's place from left (0, the public face) to right (the leaves)."""
    if module in SCORER_FACE:
        return 0
    parts = module.split(".")
    if (ROOT / "scorer" / parts[1]).is_dir():
        assert parts[1] in SCORER_LAYERS, f"scorer/{parts[1]}/ has no place in SCORER_LAYERS"
        return 1 + SCORER_LAYERS.index(parts[1])
    return 1 + len(SCORER_LAYERS)


def test_scorer_sub_packages_import_only_to_their_right() -> None:
    """Counting imports inside functions and for type checking too: each is a dependency."""
    wrong = []
    for i in _imports():
        target = _ours(i.target)
        if i.module.split(".")[0] != "scorer" or target is None or target.split(".")[0] != "scorer":
            continue
        if _scorer_layer(target) < _scorer_layer(i.module):
            wrong.append(f"{i.module}:{i.line} imports {target}")
    assert not wrong, f"the scorer's order is {' -> '.join(SCORER_LAYERS)} -> its top-level modules:\n" + "\n".join(wrong)


@cache
def _kernel_worker_modules() -> frozenset[str]:
    """What a kernel worker has loaded when kernel.py is imported: the roots, what they import at
    module level (not for type checking), and the packages above each."""
    seen: set[str] = set()
    todo = list(KERNEL_WORKER_ROOTS)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:n]) for n in range(1, len(parts)) if ".".join(parts[:n]) in _modules()]
        todo += [t for i in _imports() if i.module == module and not i.function and not i.type_only
                 and (t := _ours(i.target)) is not None]
    return frozenset(seen)


def test_the_kernel_worker_binds_its_scorer_imports_before_the_kernel_loads() -> None:
    """An import inside a function runs when the function does, through the module table: after
    kernel.py is loaded the kernel could have put its own module there. The public face's lazy
    attributes are the exception: nothing in a worker asks for them."""
    loaded = _kernel_worker_modules()
    assert set(KERNEL_WORKER_ROOTS) | {"scorer.workers.protocol", "scorer.checks.dynamic"} <= loaded
    late = [f"{i.module}:{i.line} imports {i.target} inside a function" for i in _imports()
            if i.module in loaded and i.module not in SCORER_FACE and i.function and i.target.split(".")[0] == "scorer"]
    assert not late, "import these at module level (the module is loaded before kernel.py):\n" + "\n".join(late)


def test_the_kernel_worker_imports_nothing_else_inside_a_function() -> None:
    """Third-party and standard modules too: each import inside a function of a kernel-worker module
    is one of LAZY_BEFORE_THE_KERNEL, whose reasons say why it runs before the kernel does."""
    loaded = _kernel_worker_modules()
    lazy = {f"{i.module}:{i.function}" for i in _imports() if i.module in loaded and i.module not in SCORER_FACE and i.function}
    assert lazy - set(LAZY_BEFORE_THE_KERNEL) == set(), "import at module level, or say why it runs before the kernel"
    assert set(LAZY_BEFORE_THE_KERNEL) - lazy == set(), "these no longer import inside the function: drop them"


def test_scorer_imports_only_torch_triton_and_the_standard_library() -> None:
    wrong = [f"{i.module}:{i.line} imports {i.target}" for i in _imports()
             if i.module.split(".")[0] == "scorer" and not _is_stdlib(i.target)
             and i.target.split(".")[0] not in SCORER_THIRD_PARTY | SCORER_OPTIONAL | {"scorer"}]
    assert not wrong, "\n".join(wrong)


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_nothing_imports_in_a_circle() -> None:
    """Counting imports inside functions too: one there only to dodge a circle still makes one."""
    edges: dict[str, set[str]] = {}
    for i in _imports():
        target = _ours(i.target)
        if target is not None and target != i.module and not i.type_only:
            edges.setdefault(i.module, set()).add(target)
    assert _circles(edges) == []


@cache
def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _dist_name(requirement: str) -> str:
    name = requirement.split(";")[0]
    for stop in "<>=!~[ ":
        name = name.split(stop)[0]
    return name.strip().lower().replace("_", "-")


def _declared(include_extras: bool, shipped: bool = True) -> set[str]:
    project = _pyproject()
    names = {_dist_name(r) for r in project["dependencies"]}
    if include_extras:
        for extra, reqs in project["optional-dependencies"].items():
            if extra not in NOT_FOR_SHIPPED_CODE or not shipped:
                names |= {_dist_name(r) for r in reqs}
    return names


def _distribution(import_name: str) -> str:
    return _dist_name(DISTRIBUTION_OF.get(import_name, import_name))


def test_every_third_party_import_is_a_declared_dependency() -> None:
    missing = []
    for i in _imports():
        top = i.target.split(".")[0]
        if top in FOLDERS or _is_stdlib(top):
            continue
        if _distribution(top) not in _declared(include_extras=True, shipped=i.module.split(".")[0] in SHIPPED):
            missing.append(f"{i.module}:{i.line} imports {i.target} (distribution {_distribution(top)})")
    assert not missing, "add to pyproject.toml's dependencies (or an extra), or to DISTRIBUTION_OF:\n" + "\n".join(missing)


def test_each_import_name_maps_to_a_declared_distribution_that_provides_it() -> None:
    """Where the distribution is not installed there is nothing to compare, and nothing fails."""
    for name, distribution in DISTRIBUTION_OF.items():
        assert _dist_name(distribution) in _declared(include_extras=True), distribution
        try:
            metadata.distribution(distribution)
        except metadata.PackageNotFoundError:
            continue
        assert _dist_name(distribution) in {_dist_name(d) for d in metadata.packages_distributions().get(name, [])}, name


def test_suites_import_only_what_the_scorer_image_has() -> None:
    """Task and solution files run in the scorer's workers, inside any PyTorch image."""
    wrong = [f"{i.module}:{i.line} imports {i.target}" for i in _imports()
             if i.module.split(".")[0] == SUITES and not _is_stdlib(i.target)
             and i.target.split(".")[0] not in SCORER_THIRD_PARTY]
    assert not wrong, "\n".join(wrong)


def test_no_dependency_is_listed_twice() -> None:
    project = _pyproject()
    core = [_dist_name(r) for r in project["dependencies"]]
    assert len(core) == len(set(core))
    for extra, reqs in project["optional-dependencies"].items():
        names = [_dist_name(r) for r in reqs]
        assert len(names) == len(set(names)), extra
        assert not set(names) & set(core), f"extra {extra} repeats a core dependency"


PROVIDER_SDKS = {"openai": "openai", "anthropic": "anthropic", "google": "google.genai", "litellm": "litellm"}


def test_provider_sdks_are_extras_not_core_dependencies() -> None:
    extras = _pyproject()["optional-dependencies"]
    core = _declared(include_extras=False)
    for provider in PROVIDER_SDKS:
        assert provider in extras, provider
        assert not {_dist_name(r) for r in extras[provider]} & core, provider
    in_all = {name.strip() for req in extras["all"] if req.startswith("kernelarena[")
              for name in req.removeprefix("kernelarena[").split("]")[0].split(",")}
    assert in_all == set(PROVIDER_SDKS)


@pytest.mark.parametrize("provider", sorted(PROVIDER_SDKS))
def test_a_missing_sdk_names_its_extra(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the SDK not importable (None in sys.modules makes `import` raise ImportError), the
    error of building a client names `kernelarena[<provider>]`, an extra pyproject declares."""
    from harnesses.models import create_model

    monkeypatch.setitem(sys.modules, PROVIDER_SDKS[provider], None)
    monkeypatch.delitem(sys.modules, f"harnesses.models.{provider}_client", raising=False)
    with pytest.raises(UserError, match=rf"pip install 'kernelarena\[{provider}\]'"):
        create_model(f"{provider}:some-model")
    assert provider in _pyproject()["optional-dependencies"]


# Names the tests import that no distribution provides: modules made while the tests run.
MADE_BY_THE_TESTS = {
    "fakelib": "the guard test's library, written to a temporary folder",
    "kernelarena_task": "the name the scorer loads a task's module under, which attack kernels look up",
    "_swish_fast": "the module an obfuscated-code attack writes beside itself and imports",
}


def test_every_third_party_import_of_the_tests_is_declared() -> None:
    """What `make test` installs (the dev extra and the others it names) covers every import of the
    tests, read from each file that parses (some kernels in tests/ are meant not to)."""
    declared = _declared(include_extras=True, shipped=False)
    missing = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except SyntaxError:
                continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for top in {name.split(".")[0] for name in names}:
                if top in FOLDERS or top in MADE_BY_THE_TESTS or top == "__future__" or _is_stdlib(top):
                    continue
                if _distribution(top) not in declared:
                    missing.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {top}")
    assert not missing, "add to pyproject.toml's dev extra (or the extra it belongs to):\n" + "\n".join(missing)
