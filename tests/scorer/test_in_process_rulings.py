"""The runtime guard, the kernel's turns and the GPU hold observe in the kernel's worker and the
judge rules (scorer/judge/rulings/runtime_guard.py, kernel_turns.py, gpu_hold.py): the worker's
replies carry typed observations, parsed strictly, and never a finding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scorer.checks.dynamic import LibraryCallMonitor
from scorer.checks.guard import RuntimeGuard
from scorer.checks.residency import ACCESS_PROPERTY_PERSISTING
from scorer.checks.turns import Turns
from scorer.gpu.timing import HOLD_INCOMPLETE
from scorer.judge import registry
from scorer.judge.rulings.gpu_hold import hold_findings
from scorer.judge.rulings.kernel_turns import turn_findings
from scorer.judge.rulings.runtime_guard import guard_findings
from scorer.tasks.suites import load_suite
from scorer.workers import replies
from scorer.workers.protocol import ProtocolViolation

# The guard's report where it saw nothing (not armed: no hook, nothing watched).
NOTHING_SEEN: dict[str, Any] = RuntimeGuard(Path("kernel.py")).check("load")
_LIBRARY = LibraryCallMonitor(frozenset()).observe()
_FORGED = [{"pattern": "timer-patching", "evidence": "x", "severity": "reject"}]


def _guard(**changes: Any) -> replies.GuardObservation:
    return replies.GuardObservation.parse(json.loads(json.dumps({**NOTHING_SEEN, **changes})))


def _call(trial: str) -> dict[str, Any]:
    return {"trial": trial, "devices": ["cpu"], "mutated": [], "error": None,
            "output": {"items": [], "error": None}, "library": _LIBRARY}


def _replies() -> dict[str, tuple[dict[str, Any], Any]]:
    """One well-formed reply of each kind that carried findings before, with its parser."""
    trials = replies.correctness_trials(1, 0)
    launches = {"triton_defined": ["k"], "cuda_defined": [], "triton_in_source": True, "triton_launched": {"k": 1},
                "device_kernels": None}
    timing = {"ok": True, "timer": "cpu/perf_counter", "times_ms": [1.0], "host_times_ms": [1.0], "event_times_ms": None,
              "drain_ms": None, "idle_drain_ms": None, "gate": "", "gate_ms": None,
              "launch_window": {"open": 0, "watched": 0}, "guard": NOTHING_SEEN, "turns": [], "kept": [],
              "library": _LIBRARY}
    return {
        "load": ({"ok": True, "guard": NOTHING_SEEN}, replies.LoadReply.parse),
        "correctness": ({"ok": True, "calls": [_call(t) for t in trials], "input_digests": ["a"], "guard": NOTHING_SEEN,
                         "turns": [], "gpu_lock_wait_s": 0.0, "launches": launches},
                        lambda h: replies.CorrectnessReply.parse(h, trials)),
        "timing": (timing, lambda h: replies.TimeReply.parse(h, 1, on_gpu=False, kept=[])),
        "batch": ({"ok": True, "turns": [], "library": _LIBRARY}, replies.BatchReply.parse),
    }


@pytest.mark.parametrize("kind", ["load", "correctness", "timing", "batch"])
def test_a_reply_carrying_findings_is_a_protocol_violation(kind: str) -> None:
    header, parse = _replies()[kind]
    parse(header)
    for findings in (_FORGED, []):
        with pytest.raises(ProtocolViolation, match="unknown keys \\['findings'\\]"):
            parse({**header, "findings": findings})


def test_a_call_record_carrying_findings_is_a_protocol_violation() -> None:
    replies.CallMeta.parse(_call("seed-0"))
    with pytest.raises(ProtocolViolation):
        replies.CallMeta.parse({**_call("seed-0"), "findings": _FORGED})


def test_a_reply_without_its_observations_is_a_protocol_violation() -> None:
    for header, parse in _replies().values():
        for key in ("guard", "turns"):
            if key in header:
                with pytest.raises(ProtocolViolation):
                    parse({k: v for k, v in header.items() if k != key})
    header, parse = _replies()["batch"]
    with pytest.raises(ProtocolViolation):  # the batch has no guard's report: its checks would sit in the clock
        parse({**header, "guard": NOTHING_SEEN})


_IDENTITY = {"kind": "callable", "label": "time.perf_counter", "phase": "load", "was": "<built-in>", "now": "<fn>"}
_AUDIT = {"event": "sys._getframe", "detail": "sys._getframe(1)", "line": 4, "phase": "correctness"}
_THREAD = {"kind": "python", "name": "sneaky", "ident": 140001, "native_id": 4242, "runs": "spin at kernel.py:3",
           "phase": "correctness"}
_CARVE_OUT = {"bytes": 4 << 20, "settled_bytes": 0, "phase": "load"}
_WINDOW = {"stream": "current stream", "bytes": 1 << 20, "hit_prop": ACCESS_PROPERTY_PERSISTING, "phase": "timing"}
_TURN = {"what": "drawn (kernel.py:5)", "step": "drawing inputs"}

_MALFORMED: list[tuple[Any, dict[str, Any], list[dict[str, Any]]]] = [
    (replies.IdentityChange.parse, _IDENTITY,
     [{"kind": "attribute"}, {"label": 7}, {"was": "x" * 201}, {"phase": "p" * 65}, {"extra": 1}]),
    (replies.AuditEvent.parse, _AUDIT, [{"line": -1}, {"line": True}, {"detail": "d" * 1001}, {"event": None},
                                        {"pattern": "harness-introspection"}]),
    (replies.ThreadStarted.parse, _THREAD, [{"kind": "process"}, {"ident": "1"}, {"native_id": -3},
                                            {"name": "n" * 201}, {"runs": "r" * 1001}, {"extra": 1}]),
    (replies.CarveOut.parse, _CARVE_OUT, [{"bytes": 1.5}, {"settled_bytes": -1}, {"extra": 1}]),
    (replies.PolicyWindow.parse, _WINDOW, [{"stream": "side stream"}, {"hit_prop": -2}, {"bytes": "big"},
                                           {"extra": 1}]),
    (replies.TurnObservation.parse, _TURN, [{"what": 3}, {"step": "s" * 65}, {"what": "w" * 1001},
                                            {"pattern": "harness-introspection"}]),
    (replies.GuardObservation.parse, NOTHING_SEEN,
     [{"identity": {}}, {"audit": [_AUDIT] * 65}, {"audit_dropped": -1}, {"threads": "none"},
      {"process_name": "p" * 201}, {"threads_at_arm": 1.0}, {"carve_outs": [_CARVE_OUT] * 65},
      {"windows": [{**_WINDOW, "hit_prop": "persisting"}]}, {"findings": []}]),
]


@pytest.mark.parametrize("parse,good,changes", _MALFORMED, ids=lambda v: getattr(v, "__qualname__", ""))
def test_each_observation_refuses_what_is_off_its_schema(parse: Any, good: dict[str, Any],
                                                         changes: list[dict[str, Any]]) -> None:
    parse(good)
    for change in changes:
        with pytest.raises(ProtocolViolation):
            parse({**good, **change})
    for key in good:
        with pytest.raises(ProtocolViolation):
            parse({k: v for k, v in good.items() if k != key})
    with pytest.raises(ProtocolViolation):
        parse([good])


def test_the_turns_observations_are_bounded() -> None:
    header, parse = _replies()["batch"]
    parse({**header, "turns": [_TURN] * 5})
    with pytest.raises(ProtocolViolation):
        parse({**header, "turns": [_TURN] * 6})


def _ruled(seen: replies.GuardObservation) -> list[tuple[str, str]]:
    return [(f.pattern, f.evidence) for f in guard_findings(seen)]


def test_a_replaced_object_is_timer_patching_in_the_judge() -> None:
    module = {**_IDENTITY, "kind": "module-entry", "label": "scorer.checks.census", "phase": "load"}
    code = {**_IDENTITY, "kind": "code", "label": "scorer.checks.census.stop_counting", "phase": "correctness"}
    assert _ruled(_guard(identity=[_IDENTITY, module, code])) == [
        ("timer-patching", "time.perf_counter was replaced during load (was <built-in>, now <fn>)"),
        ("timer-patching", "the module table's entry for scorer.checks.census was replaced during load"),
        ("timer-patching", "the code of scorer.checks.census.stop_counting was replaced during correctness")]


def test_audit_events_are_ruled_by_what_the_event_is() -> None:
    events = [_AUDIT, {**_AUDIT, "event": "subprocess.Popen", "detail": "subprocess.Popen('sh')", "line": 9},
              {**_AUDIT, "event": "object.__setattr__", "detail": "object.__setattr__(time, 'perf_counter')"}]
    assert _ruled(_guard(audit=events, audit_dropped=3)) == [
        ("harness-introspection", "kernel.py:4: sys._getframe(1) (audit event 'sys._getframe' raised by the kernel's "
                                  "code during correctness)"),
        ("thread-injection", "kernel.py:9: subprocess.Popen('sh') (audit event 'subprocess.Popen' raised by the "
                             "kernel's code during correctness)"),
        ("timer-patching", "kernel.py:4: object.__setattr__(time, 'perf_counter') (audit event 'object.__setattr__' "
                           "raised by the kernel's code during correctness)"),
        ("harness-introspection", "3 further audit events from the kernel's code were not kept")]


def test_threads_are_thread_injection_one_finding_per_kind_and_phase() -> None:
    native = {"kind": "native", "name": "python", "ident": None, "native_id": 4343,
              "runs": "started outside `threading`: code of libspin.so", "phase": "correctness"}
    later = {**_THREAD, "name": "later", "ident": 140002, "native_id": 4444, "phase": "timing"}
    found = _ruled(_guard(threads=[_THREAD, native, later], process_name="python", threads_at_arm=3))
    assert found == [
        ("thread-injection", "1 Python thread(s) started by the kernel still alive after correctness: "
                             "sneaky (spin at kernel.py:3)"),
        ("thread-injection", "1 native thread(s) appeared after correctness that are not the runtime's (by the code "
                             "on their stacks: python: started outside `threading`: code of libspin.so; process is "
                             "'python', 3 threads at arm)"),
        ("thread-injection", "1 Python thread(s) started by the kernel still alive after timing: later "
                             "(spin at kernel.py:3)")]


def test_persisting_l2_state_is_cache_residency_in_the_judge() -> None:
    streaming = {**_WINDOW, "stream": "default stream", "hit_prop": 1}
    smaller = {**_CARVE_OUT, "bytes": 0, "settled_bytes": 1 << 20}
    assert _ruled(_guard(carve_outs=[_CARVE_OUT, smaller], windows=[_WINDOW, streaming])) == [
        ("cache-residency", "the device's persisting-L2 carve-out was 4194304 bytes after load "
                            "(cudaLimitPersistingL2CacheSize; 0 bytes before the kernel loaded)"),
        ("cache-residency", "the current stream carried a persisting L2 access policy window of 1048576 bytes "
                            "after timing (cudaStreamSetAttribute)")]
    assert _ruled(_guard()) == []


def test_kernel_code_in_the_scorers_turn_is_harness_introspection_in_the_judge(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    path.write_text("def drawn():\n    return 1\n")
    namespace: dict[str, Any] = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    turns = Turns(frozenset({str(path)}))
    with turns.scorer_turn("drawing inputs"):
        namespace["drawn"]()
    header, parse = _replies()["batch"]
    seen = parse({**header, "turns": turns.take_observed()}).observed.turns
    (finding,) = turn_findings(seen)
    assert finding.pattern == "harness-introspection"
    assert finding.evidence.startswith("the kernel's code ran in the scorer's own steps, outside forward: drawn "
                                       "(kernel.py:1) during drawing inputs. ")
    assert turn_findings([]) == [] and turns.take_observed() == []


def test_an_incomplete_hold_is_timer_patching_in_the_judge() -> None:
    assert [(f.pattern, f.evidence) for f in hold_findings(HOLD_INCOMPLETE)] == [
        ("timer-patching", f"the GPU-wide hold before each start event did not run in full ({HOLD_INCOMPLETE})")]
    assert hold_findings("sm-hold 200 us, 528 programs on 132 SMs") == [] and hold_findings("none") == []


def test_the_registry_rules_each_phase_on_the_observations_it_is_given() -> None:
    demo = load_suite("demo")
    evidence = registry.Evidence(demo, demo.task("swish"), "cpu")
    header, parse = _replies()["timing"]
    timed = parse({**header, "gate": HOLD_INCOMPLETE, "turns": [_TURN],
                   "guard": {**NOTHING_SEEN, "identity": [{**_IDENTITY, "phase": "timing"}]}}).observed
    evidence.observed = [timed]
    found = {f.pattern for f in registry.rule("timing", evidence)}
    assert found == {"timer-patching", "harness-introspection"}
    evidence.observed = [parse(header).observed]
    assert registry.rule("timing", evidence) == []
    evidence.observed = [replies.InProcess(None, [replies.TurnObservation.parse(_TURN)])]
    assert [f.pattern for f in registry.rule("batch", evidence)] == ["harness-introspection"]


def test_no_check_takes_findings_from_the_kernels_process() -> None:
    in_process = [c for c in registry.checks() if c.layer == "in-process"]
    assert {"runtime-guard", "kernel-turns", "gpu-hold"} <= {c.id for c in in_process}
    assert all(c.phases for c in in_process if c.id in ("runtime-guard", "kernel-turns", "gpu-hold"))
    assert not hasattr(registry, "in_process_patterns")
