"""The kernel's turns (scorer/checks/turns.py), case by case, with the standard library only: the
cases run inside pytest (this interpreter's mechanism) and, through `python turns_cases.py`, under
any Python 3.12+ on the machine (sys.monitoring), since CI's own interpreter is 3.11.

    PYTHONPATH=. python3.12 tests/scorer/turns_cases.py   # prints the mechanism, then a line a case
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import random
import shutil
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path

from scorer.checks import turns as turns_mod
from scorer.checks.turns import Turns

KERNEL = '''
calls = []


def draw_patch(real):
    def drawn(*a, **k):
        x = real(*a, **k)
        calls.append(x * 2)
        return x
    return drawn


class Holder:
    def __del__(self):
        calls.append("finalised")


def forward(x):
    return x * 2
'''

TASK = '''
def get_inputs():
    return [1.0, 2.0]


class Model:
    def forward(self, x):
        return x
'''

_loaded = [0]


def _load(path: Path, name_hint: str) -> types.ModuleType:
    _loaded[0] += 1
    spec = importlib.util.spec_from_file_location(f"turns_case_{name_hint}_{_loaded[0]}", str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _kernel(tmp: Path) -> tuple[types.ModuleType, Turns]:
    path = tmp / "kernel.py"
    path.write_text(KERNEL)
    return _load(path, "kernel"), Turns(frozenset({str(path)}))


def _evidence(turns: Turns) -> str:
    """What was noted, as the judge names it (scorer/judge/rulings/kernel_turns.py: "what during step")."""
    return "; ".join(f"{seen['what']} during {seen['step']}" for seen in turns.take_observed())


def kernel_code_in_the_scorers_turn_is_a_finding_once(tmp: Path) -> None:
    module, turns = _kernel(tmp)
    draw = module.draw_patch(random.random)
    with turns.scorer_turn("drawing inputs"):
        draw()
    found = turns.take_observed()
    assert len(found) == 1 and found[0]["step"] == "drawing inputs", found
    assert "drawn (kernel.py:" in found[0]["what"]
    assert turns.take_observed() == [], "a reply carries each note once"
    assert sys.getprofile() is None, "the scorer's turn left its profile function behind"


def forward_in_the_kernels_turn_is_not_noted_and_the_turn_resumes_after(tmp: Path) -> None:
    module, turns = _kernel(tmp)
    forward = turns.kernel_call(module.forward)
    with turns.scorer_turn("timing"):
        forward(3.0)
        assert turns.take_observed() == []
        module.Holder()  # freed at once: its finaliser runs in the scorer's turn
    evidence = _evidence(turns)
    assert "Holder.__del__" in evidence, evidence


def a_forward_that_clears_the_profile_function_does_not_end_the_scorers_turn(tmp: Path) -> None:
    module, turns = _kernel(tmp)
    forward = turns.kernel_call(lambda x: (sys.setprofile(None), module.forward(x))[1])
    with turns.scorer_turn("timing"):
        forward(3.0)
        module.draw_patch(random.random)()
    assert "drawn (kernel.py:" in _evidence(turns)


def kernel_code_first_run_under_another_turns_is_still_noted(tmp: Path) -> None:
    """Code that started while a Turns without the kernel's files was attached (the worker's own
    before load) is silenced there by sys.monitoring; the next scorer turn re-enables it."""
    module, turns = _kernel(tmp)
    draw = module.draw_patch(random.random)
    with Turns(frozenset()).scorer_turn("set-up"):
        draw()
    with turns.scorer_turn("drawing inputs"):
        draw()
    assert "drawn (kernel.py:" in _evidence(turns)


def a_turn_without_restart_still_notes_the_kernels_code(tmp: Path) -> None:
    """The judge-clocked batch's turn does not restart (its set-up's did): the kernel's own code is
    never silenced, so it is noted there all the same."""
    module, turns = _kernel(tmp)
    draw = module.draw_patch(random.random)
    forward = turns.kernel_call(module.forward)
    with turns.scorer_turn("the batch's set-up"):
        forward(draw())
    assert "drawn (kernel.py:" in _evidence(turns)
    with turns.scorer_turn("the judge-clocked batch", restart=False):
        forward(3.0)
        module.Holder()  # its finaliser: kernel code not run before, in the scorer's turn
    evidence = _evidence(turns)
    assert "Holder.__del__" in evidence and "during the judge-clocked batch" in evidence, evidence


def _extension_copy(folder: Path) -> types.ModuleType:
    """A real C extension module loaded from `folder`, as a kernel's load_inline build would be:
    a copy of one of the standard library's."""
    for name in ("_bisect", "_json", "_csv", "_heapq"):
        original = getattr(__import__(name), "__file__", None)
        if original and original.endswith(".so"):
            target = folder / Path(original).name
            shutil.copy(original, target)
            loader = importlib.machinery.ExtensionFileLoader(name, str(target))
            module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(name, str(target), loader=loader))
            loader.exec_module(module)
            return module
    raise RuntimeError("no standard-library extension module to copy")


def the_task_modules_python_code_in_the_kernels_folder_is_not_the_kernels_native_code(tmp: Path) -> None:
    """The worker loads the task's module from the kernel worker's folder, which holds the kernel's
    builds too: its Python functions and classes are the scorer's (on an H100 sys.monitoring's CALL
    event read the scorer's call of get_inputs as a kernel-built function for every solution)."""
    (tmp / "task.py").write_text(TASK)
    task = _load(tmp / "task.py", "task")
    turns = Turns(frozenset(), native_dirs=(str(tmp),))
    with turns.scorer_turn("correctness"):
        task.get_inputs()
        task.Model().forward(1.0)
    assert turns.take_observed() == []


def a_c_function_of_a_kernel_built_extension_is_noted(tmp: Path) -> None:
    build = tmp / "torch_extensions"
    build.mkdir()
    ext = _extension_copy(build)
    function = next(getattr(ext, n) for n in sorted(dir(ext)) if isinstance(getattr(ext, n), types.BuiltinFunctionType))
    turns = Turns(frozenset(), native_dirs=(str(build),))
    with turns.scorer_turn("drawing inputs"):
        try:
            function()
        except TypeError:
            pass  # called without its arguments: the call itself is what is noted
    evidence = _evidence(turns)
    assert f"(native module {ext.__name__})" in evidence, evidence


def a_forward_that_switches_off_the_scorers_monitoring_tool_is_noted_and_undone(tmp: Path) -> None:
    if turns_mod._monitor() is None:
        return  # the profile function's counterpart is the case that clears it
    module, turns = _kernel(tmp)

    def tamper(x):
        sys.monitoring.set_events(turns_mod._monitor().tool, 0)
        return module.forward(x)

    forward = turns.kernel_call(tamper)
    with turns.scorer_turn("timing"):
        forward(3.0)
        module.draw_patch(random.random)()
    evidence = _evidence(turns)
    assert "a change to the scorer's sys.monitoring tool" in evidence, evidence
    assert "drawn (kernel.py:" in evidence, "the tool was re-armed after forward"


CASES: list[Callable[[Path], None]] = [
    kernel_code_in_the_scorers_turn_is_a_finding_once,
    forward_in_the_kernels_turn_is_not_noted_and_the_turn_resumes_after,
    a_forward_that_clears_the_profile_function_does_not_end_the_scorers_turn,
    kernel_code_first_run_under_another_turns_is_still_noted,
    a_turn_without_restart_still_notes_the_kernels_code,
    the_task_modules_python_code_in_the_kernels_folder_is_not_the_kernels_native_code,
    a_c_function_of_a_kernel_built_extension_is_noted,
    a_forward_that_switches_off_the_scorers_monitoring_tool_is_noted_and_undone,
]


def mechanism() -> str:
    return "sys.monitoring" if turns_mod._monitor() is not None else "sys.setprofile"


def main() -> int:
    print(f"Python {sys.version.split()[0]}, turns by {mechanism()}")
    failed = 0
    for case in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                case(Path(tmp))
                print(f"ok   {case.__name__}")
            except Exception as exc:
                failed += 1
                print(f"FAIL {case.__name__}: {type(exc).__name__}: {exc}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
