"""The kernel's code runs in the kernel's turns only (scorer/checks/turns.py)."""

import importlib.util
import sys
from pathlib import Path

import pytest

from scorer.checks.turns import Turns

KERNEL = '''
import torch

calls = []


def draw_patch(real):
    def drawn(*a, **k):
        x = real(*a, **k)
        calls.append(x * torch.sigmoid(x))
        return x
    return drawn


class Holder:
    def __del__(self):
        calls.append("finalised")


def forward(x):
    return x * 2
'''


def _kernel(tmp_path: Path):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    spec = importlib.util.spec_from_file_location("turns_test_kernel", str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, Turns(frozenset({str(path)}))


def test_kernel_code_in_the_scorers_turn_is_a_finding_once(tmp_path):
    import torch

    module, turns = _kernel(tmp_path)
    draw = module.draw_patch(torch.randn)
    with turns.scorer_turn("drawing inputs"):
        draw(4)
    found = turns.take_findings()
    assert [f.pattern for f in found] == ["harness-introspection"]
    assert "drawn (kernel.py:" in found[0].evidence and "during drawing inputs" in found[0].evidence
    assert turns.take_findings() == [], "a reply carries each note once"
    assert sys.getprofile() is None, "the scorer's turn left its profile function behind"


def test_forward_in_the_kernels_turn_is_not_noted_and_the_turn_resumes_after(tmp_path):
    import torch

    module, turns = _kernel(tmp_path)
    forward = turns.kernel_call(module.forward)
    with turns.scorer_turn("timing"):
        forward(torch.ones(3))
        assert turns.take_findings() == []
        module.Holder()  # freed at once: its finaliser runs in the scorer's turn
    found = turns.take_findings()
    assert len(found) == 1 and "Holder.__del__" in found[0].evidence


def test_a_forward_that_clears_the_profile_function_does_not_end_the_scorers_turn(tmp_path):
    import torch

    module, turns = _kernel(tmp_path)
    forward = turns.kernel_call(lambda x: (sys.setprofile(None), module.forward(x))[1])
    with turns.scorer_turn("timing"):
        forward(torch.ones(3))
        module.draw_patch(torch.randn)(2)
    assert len(turns.take_findings()) == 1


class _CFunctionOf:
    """Stands for a C function of a pybind11-style extension: it names its module."""

    def __init__(self, module: str) -> None:
        self.__module__ = module
        self.__name__ = "launch"


def test_a_kernel_built_extension_is_noted_and_tritons_generated_launchers_are_not(tmp_path, monkeypatch):
    import types

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


def test_kernel_code_first_run_under_another_turns_is_still_noted(tmp_path):
    """Code that started while a Turns without the kernel's files was attached (the worker's own
    before load) is silenced there by sys.monitoring; the next scorer turn re-enables it."""
    import torch

    module, turns = _kernel(tmp_path)
    draw = module.draw_patch(torch.randn)
    with Turns(frozenset()).scorer_turn("set-up"):
        draw(2)
    with turns.scorer_turn("drawing inputs"):
        draw(2)
    found = turns.take_findings()
    assert len(found) == 1 and "drawn (kernel.py:" in found[0].evidence


@pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring is Python 3.12+")
def test_a_forward_that_switches_off_the_scorers_monitoring_tool_is_noted_and_undone(tmp_path):
    import torch

    from scorer.checks import turns as turns_mod

    module, turns = _kernel(tmp_path)

    def tamper(x):
        tool = turns_mod._monitor().tool
        sys.monitoring.set_events(tool, 0)
        return module.forward(x)

    forward = turns.kernel_call(tamper)
    with turns.scorer_turn("timing"):
        forward(torch.ones(3))
        module.draw_patch(torch.randn)(2)
    evidence = " ".join(f.evidence for f in turns.take_findings())
    assert "a change to the scorer's sys.monitoring tool" in evidence
    assert "drawn (kernel.py:" in evidence, "the tool was re-armed after forward"
