"""Whose turn it is in the kernel's process: the kernel's code runs in its turns only.

The kernel worker alternates between the kernel's turns (importing kernel.py, building ModelNew,
each call of forward) and the scorer's (drawing inputs, copying and checking outputs, the cache
flush, the timer's bookkeeping). Work the kernel's code does in the scorer's turn is outside the
timed region and outside every watched call: a red-team kernel replaced the task module's
`get_inputs` with a function that drew the inputs and computed the answer beside them, and
forward returned it (126x on CPU, no finding). Its variants are endless (the task module's
globals, a torch function, a tensor method, a finaliser that fires when the scorer frees an input
set), but they share one trait: Python code of kernel.py runs while it is the scorer's turn.
The worker notes it and sends what ran in which step (replies.TurnObservation); the judge rules
(scorer/judge/rulings/kernel_turns.py).

So the scorer's turn notes every call into code from the kernel's files, and every call of a C
function from an extension module the kernel built (a `load_inline` module's function put where
the scorer will call it). On Python 3.12 and later this is `sys.monitoring` (PEP 669), armed once
and never switched: a start of any code not the kernel's disables its own event at that place, so
after the first calls only the kernel's code reports, and a flag says whose turn it is. Before
3.12 it is a profile function (`sys.setprofile`, this thread) that the kernel's turns switch
off. With the profile function on an H200's Python 3.12, the judge's clock read about 1.2 ms a
batch call more than the kernel's timer (12 of 46 suite solutions were timer-patching); the
likely cause is that on 3.12 the profile function is a shim over `sys.monitoring`, and each
switch makes every code object run next instrument itself again. Code only enters the scorer's
turn through a call, which the profile function sees before the body runs; `exec`/`compile` of
code under another file name is the guard's finding. What the profile function cannot see is
native code the scorer never calls by name (a C++ override registered in torch's dispatcher):
docs/HACKS.md lists it.
"""

from __future__ import annotations

import os
import sys
import types
from _thread import get_ident as _thread_ident
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_MAX_NOTED = 5
_MAX_WHAT = 1000  # replies.py's bound on what one note names
# sys.monitoring on 3.12 and later, else None. Any: the type check targets 3.11, whose sys lacks it.
_MONITORING: Any = getattr(sys, "monitoring", None)
_TOOL_NAME = "kernelarena-turns"
# Ids no standard tool claims (0 debugger, 1 coverage, 2 profiler, 5 optimizer) first.
_TOOL_IDS = (3, 4, 0, 1, 2, 5)


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
        self._kernel_depth = 0  # > 0 inside a kernel_call

    @classmethod
    def calibration(cls) -> Turns:
        """The kernel worker's watch with nothing to note, for the reference worker's batch. The
        judge takes that batch's per-call cost of drawing inputs and copying outputs off the
        kernel's batch, whose draws run under the watch: unwatched there, the difference read as
        the kernel's time (24 of 47 suite solutions were timer-patching on an H100). A folder no
        module is loaded from keeps every C call on the kernel worker's path."""
        return cls(frozenset(), (os.path.join(os.sep, "nonexistent", "kernelarena-no-kernel"),))

    def _note(self, what: str) -> None:
        what = what[:_MAX_WHAT]
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
                self._started(code)
        elif event == "c_call" and self.native_dirs:
            module = self._kernel_native(arg)
            if module is not None:
                self._called_native(arg, module)

    # The profile function (installed in the scorer's turn only) and _Monitor report through these.
    def _started(self, code: types.CodeType) -> None:
        if self.step and not self._kernel_depth:
            self._note(f"{code.co_qualname} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})")

    def _called_native(self, func: Any, module: str) -> None:
        if self.step and not self._kernel_depth:
            self._note(f"{getattr(func, '__name__', '?')} (native module {module})")

    @contextmanager
    def scorer_turn(self, step: str, restart: bool = True) -> Iterator[None]:
        """The scorer's step `step`: the kernel's code has no business running in it. `restart=False`
        (sys.monitoring): the places silenced since this Turns' last restart stay silent, for a step
        that follows one which restarted with no code of the kernel's run between but what it ran
        itself (the judge-clocked batch after its set-up). A restart makes every code object run next
        instrument itself again, a cost the batch's clock would count; a call site the kernel swaps a
        function into during forward is missed by the calls after it either way (docs/HACKS.md)."""
        monitor = _monitor()
        if monitor is not None:
            previous_step, self.step = self.step, step
            monitor.attach(self, restart=restart or monitor.turns is not self)
            try:
                yield
            finally:
                self.step = previous_step
            return
        previous_step, previous = self.step, sys.getprofile()
        self.step = step
        sys.setprofile(self._profile)
        try:
            yield
        finally:
            sys.setprofile(previous)
            self.step = previous_step

    def kernel_call(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn` (ModelNew, its `to`) run as the kernel's turn: nothing is noted in it."""
        def call(*args: Any, **kwargs: Any) -> Any:
            monitor = _monitor()
            if monitor is not None:
                if monitor.turns is not self:
                    monitor.attach(self, restart=True)
                self._kernel_depth += 1
                try:
                    return fn(*args, **kwargs)
                finally:
                    self._kernel_depth -= 1
                    # Re-armed whatever forward did to the scorer's tool (freed it, cleared its events).
                    monitor.attach(self, restart=False)
            outer = sys.getprofile()
            sys.setprofile(None)
            try:
                return fn(*args, **kwargs)
            finally:
                # Back to the scorer's turn whatever forward did to the profile function.
                sys.setprofile(outer)

        return call

    def take_observed(self) -> list[dict[str, str]]:
        """What was noted since the last reply, each note once (replies.TurnObservation)."""
        fresh = list(self.noted.items())[self.reported:]
        self.reported = len(self.noted)
        return [{"what": what, "step": step} for what, step in fresh]


class _Monitor:
    """The process's one `sys.monitoring` tool for the turns: PY_START and PY_RESUME (code
    starting or resuming) and CALL (a C function called), reported to the Turns attached last.
    Only the thread that armed it is judged: `sys.monitoring` sees every thread, the profile
    function saw one."""

    def __init__(self) -> None:
        mon = _MONITORING
        for tool in _TOOL_IDS:
            if mon.get_tool(tool) is None:
                mon.use_tool_id(tool, _TOOL_NAME)
                break
        else:
            raise RuntimeError("no sys.monitoring tool id is free")
        self.tool = tool
        self.thread = _thread_ident()
        self.turns: Turns | None = None
        events = mon.events
        self.callbacks: dict[int, Any] = {events.PY_START: self._on_start, events.PY_RESUME: self._on_start,
                                          events.CALL: self._on_call}
        self.events = events.PY_START | events.PY_RESUME | events.CALL
        self.armed = False

    def _on_start(self, code: types.CodeType, _offset: int) -> Any:
        try:
            turns = self.turns
            if turns is None or code.co_filename not in turns.kernel_files:
                return _MONITORING.DISABLE  # not the kernel's: silent at this place until a restart
            if _thread_ident() == self.thread:
                turns._started(code)
        except Exception:
            pass  # a note missed is better than the scorer's own call failing
        return None

    def _on_call(self, _code: types.CodeType, _offset: int, func: Any, _arg0: Any) -> Any:
        try:
            turns = self.turns
            # CALL reports every callable, the task module's Python functions and classes too (on an
            # H100 every suite solution read as a finding for the scorer's call of get_inputs): as
            # with the profile function's c_call, only C functions; Python code reports PY_START.
            if turns is None or not turns.native_dirs or not isinstance(func, types.BuiltinFunctionType):
                return _MONITORING.DISABLE
            module = turns._kernel_native(func)
            if module is None:
                return _MONITORING.DISABLE
            if _thread_ident() == self.thread:
                turns._called_native(func, module)
        except Exception:
            pass
        return None

    def attach(self, turns: Turns, restart: bool) -> None:
        """Reports to `turns` from now on. Re-arms the tool where the kernel's code changed it (a
        finding). `restart` (each scorer turn) re-enables the places silenced since: code run
        while another Turns was attached, and CALL sites, so that one that later calls a
        kernel-built function reports it."""
        mon = _MONITORING
        self.turns = turns
        intact = mon.get_tool(self.tool) == _TOOL_NAME
        if not intact:
            if mon.get_tool(self.tool) is not None:
                mon.free_tool_id(self.tool)
            mon.use_tool_id(self.tool, _TOOL_NAME)
        for event, callback in self.callbacks.items():
            if mon.register_callback(self.tool, event, callback) is not callback:
                intact = False
        if mon.get_events(self.tool) != self.events:
            intact = False
            mon.set_events(self.tool, self.events)
        if self.armed and not intact:
            turns._note("a change to the scorer's sys.monitoring tool")
        self.armed = True
        if restart:
            mon.restart_events()


# The process's monitor once first asked for: [] until then, [None] where there is none.
_MONITOR: list[_Monitor | None] = [] if _MONITORING is not None else [None]


def _monitor() -> _Monitor | None:
    """The process's monitor (made on first use), or None before 3.12 or where no tool id is
    free: the profile function then."""
    if not _MONITOR:
        try:
            _MONITOR.append(_Monitor())
        except Exception:
            _MONITOR.append(None)
    return _MONITOR[0]
