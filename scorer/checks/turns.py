"""Whose turn it is in the kernel's process: the kernel's code runs in its turns only.

The kernel worker alternates between the kernel's turns (importing kernel.py, building ModelNew,
each call of forward) and the scorer's (drawing inputs, copying and checking outputs, the cache
flush, the timer's bookkeeping). Work the kernel's code does in the scorer's turn is outside the
timed region and outside every watched call: a red-team kernel replaced the task module's
`get_inputs` with a function that drew the inputs and computed the answer beside them, and
forward returned it (126x on CPU, no finding). Its variants are endless (the task module's
globals, a torch function, a tensor method, a finaliser that fires when the scorer frees an input
set), but they share one trait: Python code of kernel.py runs while it is the scorer's turn.

So the scorer's turn runs under a profile function (`sys.setprofile`, this thread) that notes
every call into code from the kernel's files, and every call of a C function from an extension
module the kernel built (a `load_inline` module's function put where the scorer will call it).
The kernel's turns switch it off, so forward pays nothing for it. Code only enters the scorer's
turn through a call, which the profile function sees before the body runs; `exec`/`compile` of
code under another file name is the guard's finding. What the profile function cannot see is
native code the scorer never calls by name (a C++ override registered in torch's dispatcher):
docs/HACKS.md lists it.
"""

from __future__ import annotations

import os
import sys
import types
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from scorer.checks.catalog import Finding

_MAX_NOTED = 5


class Turns:
    def __init__(self, kernel_files: frozenset[str], native_dirs: tuple[str, ...] = (),
                 generated_dirs: tuple[str, ...] = ()) -> None:
        """`native_dirs`: where the kernel's compiled extension modules live (its own folder,
        TORCH_EXTENSIONS_DIR); a C function of a module loaded from there is the kernel's code.
        `generated_dirs`: folders inside those whose modules Triton generated (its launchers): the
        scorer's own timing hold and flush launch through them in the scorer's turn (on an H100
        every suite solution read as a finding before they were set apart)."""
        self.kernel_files = kernel_files
        self.native_dirs = tuple(os.path.join(os.path.realpath(d), "") for d in native_dirs if d)
        self.generated_dirs = tuple(os.path.join(os.path.realpath(d), "") for d in generated_dirs if d)
        self.noted: dict[str, str] = {}  # "what (where)" -> the scorer's step it ran in
        self.reported = 0  # how many of `noted` a reply has carried
        self.step = ""
        self._native: dict[str, bool] = {}  # module name -> built by the kernel

    @classmethod
    def calibration(cls) -> "Turns":
        """The kernel worker's profile function with nothing to note, for the reference worker's
        batch. The judge takes that batch's per-call cost of drawing inputs and copying outputs
        off the kernel's batch, whose draws run under the profile: unprofiled there, the
        difference (about 1.2 ms a call on an H100 under load) read as the kernel's time, and 24
        of 47 suite solutions were timer-patching. A folder no module is loaded from keeps every
        C call on the kernel worker's path."""
        return cls(frozenset(), (os.path.join(os.sep, "nonexistent", "kernelarena-no-kernel"),))

    def _note(self, what: str) -> None:
        if what not in self.noted and len(self.noted) < _MAX_NOTED:
            self.noted[what] = self.step

    def _kernel_native(self, func: Any) -> str | None:
        """The name of the kernel-built extension module `func` belongs to, or None. A plain C
        function's `__self__` is its module; a pybind11 one's is a capsule, but it names its module."""
        owner = getattr(func, "__self__", None)
        name = owner.__name__ if isinstance(owner, types.ModuleType) else getattr(func, "__module__", None)
        if not isinstance(name, str):
            return None
        known = self._native.get(name)
        if known is None:
            module = owner if isinstance(owner, types.ModuleType) else sys.modules.get(name)
            path = getattr(module, "__file__", None)
            real = os.path.realpath(path) if isinstance(path, str) else ""
            known = bool(real) and real.startswith(self.native_dirs) and not (
                self.generated_dirs and real.startswith(self.generated_dirs))
            self._native[name] = known
        return name if known else None

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            if code.co_filename in self.kernel_files:
                self._note(f"{code.co_qualname} "
                           f"({os.path.basename(code.co_filename)}:{code.co_firstlineno})")
        elif event == "c_call" and self.native_dirs:
            module = self._kernel_native(arg)
            if module is not None:
                self._note(f"{getattr(arg, '__name__', '?')} (native module {module})")

    @contextmanager
    def scorer_turn(self, step: str) -> Iterator[None]:
        """The scorer's step `step`: the kernel's code has no business running in it."""
        previous_step, previous = self.step, sys.getprofile()
        self.step = step
        sys.setprofile(self._profile)
        try:
            yield
        finally:
            sys.setprofile(previous)
            self.step = previous_step

    def kernel_call(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn` (ModelNew, its `to`) run as the kernel's turn: the profile function is off in it."""
        def call(*args: Any, **kwargs: Any) -> Any:
            outer = sys.getprofile()
            sys.setprofile(None)
            try:
                return fn(*args, **kwargs)
            finally:
                # Back to the scorer's turn whatever forward did to the profile function.
                sys.setprofile(outer)

        return call

    def take_findings(self) -> list[Finding]:
        """A finding for what was noted since the last reply (each reply carries its own)."""
        fresh = list(self.noted.items())[self.reported:]
        self.reported = len(self.noted)
        if not fresh:
            return []
        seen = "; ".join(f"{what} during {step}" for what, step in fresh)
        return [Finding("harness-introspection",
                        f"the kernel's code ran in the scorer's own steps, outside forward: {seen}. Work done "
                        "there (while the scorer draws inputs, copies outputs or flushes the cache) is neither "
                        "timed nor watched: a patched task module, torch function, tensor method or finaliser "
                        "runs the kernel's code there")]
