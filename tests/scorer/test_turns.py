"""The kernel's code runs in the kernel's turns only (scorer/checks/turns.py). The cases live in
turns_cases.py: run here by this interpreter's mechanism, and under Python 3.12+ by sys.monitoring
(the GPU machines' Python), which CI's 3.11 cannot run in-process."""

import glob
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from scorer.checks.turns import Turns
from tests.scorer import turns_cases

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("case", turns_cases.CASES, ids=lambda c: c.__name__)
def test_turns_case(case, tmp_path):
    case(tmp_path)


def _python_with_monitoring() -> str | None:
    """This interpreter where it has sys.monitoring, else any Python 3.12+ on the machine."""
    if hasattr(sys, "monitoring"):
        return sys.executable
    candidates = sorted(glob.glob("/root/.pyenv/versions/3.1[2-9]*/bin/python3")
                        + glob.glob("/usr/bin/python3.1[2-9]") + glob.glob("/usr/local/bin/python3.1[2-9]"))
    for path in reversed(candidates):
        probe = subprocess.run([path, "-c", "import sys; print(hasattr(sys, 'monitoring'))"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == "True":
            return path
    return None


def test_every_case_holds_under_sys_monitoring():
    python = _python_with_monitoring()
    if python is None:
        pytest.skip("no Python 3.12+ on this machine")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([python, str(ROOT / "tests" / "scorer" / "turns_cases.py")], capture_output=True,
                          text=True, env=env, timeout=120)
    assert "turns by sys.monitoring" in proc.stdout, proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("\nok ") == len(turns_cases.CASES), proc.stdout


class _CFunctionOf:
    """Stands for a C function of a pybind11-style extension: it names its module."""

    def __init__(self, module: str) -> None:
        self.__module__ = module
        self.__name__ = "launch"


def test_a_kernel_built_extension_is_noted_and_tritons_generated_launchers_are_not(tmp_path, monkeypatch):
    build, cache = tmp_path / "torch_extensions", tmp_path / "triton_cache"
    for folder, name in ((build, "kernel_ext_turns"), (cache, "__triton_launcher_turns")):
        folder.mkdir()
        module = types.ModuleType(name)
        module.__file__ = str(folder / f"{name}.so")
        monkeypatch.setitem(sys.modules, name, module)
    turns = Turns(frozenset(), native_dirs=(str(tmp_path),), generated_dirs=(str(cache),))
    assert turns._kernel_native(_CFunctionOf("__triton_launcher_turns")) is None
    assert turns._kernel_native(_CFunctionOf("kernel_ext_turns")) == "kernel_ext_turns"
    assert turns._kernel_native(_CFunctionOf("math")) is None
