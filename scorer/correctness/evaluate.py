"""Evaluation of what the kernel worker returned, against the reference it never saw.

Runs in the reference worker, next to the reference outputs (on the device on a GPU); only the
outcome, a small summary, goes back to the judge."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from scorer.checks import dynamic as dynamic_checks
from scorer.checks.catalog import Finding
from scorer.correctness.compare import Comparison, Rule, compare_outputs, first_difference
from scorer.gpu.compile_gap import no_pause
from scorer.score import CorrectnessResult


def fp64_sample(t: torch.Tensor) -> torch.Tensor:
    """The evenly strided sample the precision check reads: the float64 reference keeps only this."""
    step = max(1, t.numel() // dynamic_checks._ERROR_SAMPLE)
    return t.detach().reshape(-1)[::step].clone()


@dataclass
class ReferenceSet:
    inputs: Callable[[], list[Any]]  # drawn again when evidence needs them (gigabytes at full size)
    outputs: list[torch.Tensor]
    outputs_fp64: list[torch.Tensor] | None = None  # fp64_sample of each output
    digest: str = ""


@dataclass
class ReferenceData:
    sets: list[ReferenceSet]
    alt: list[dict[str, Any]]  # {sets: [ReferenceSet], shape: overrides}


@dataclass
class CorrectnessOutcome:
    result: CorrectnessResult
    failure: str | None = None
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"result": asdict(self.result), "failure": self.failure, "findings": [f.to_dict() for f in self.findings]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CorrectnessOutcome:
        return cls(CorrectnessResult(**data["result"]), data.get("failure"), [Finding(**f) for f in data.get("findings", [])])


def _as_tensors(outputs: Any) -> list[torch.Tensor] | None:
    if isinstance(outputs, list) and all(isinstance(t, torch.Tensor) for t in outputs):
        return outputs
    return None


def _check(outputs: Any, ref: ReferenceSet, devices: list[str], device_type: str, rule: Rule) -> Comparison:
    tensors = _as_tensors(outputs)
    if tensors is None:
        return Comparison(False, "no outputs returned", float("inf"), float("inf"), 1.0)
    wrong_device = [d for d in devices if torch.device(d).type != device_type]
    if wrong_device:
        return Comparison(False, f"outputs on {wrong_device[0]}, expected on {device_type}", 0.0, 0.0, 0.0)
    return compare_outputs(tensors, ref.outputs, rule, ref.inputs)


def _first_tensor(outputs: Any) -> torch.Tensor | None:
    tensors = _as_tensors(outputs)
    return tensors[0] if tensors else None


def evaluate_correctness(ref: ReferenceData, calls: list[dict[str, Any]], outputs: dict[str, Any],
                         device_type: str, rule: Rule, task_dtype: str | None,
                         task_category: str | None = None,
                         between: Callable[[], object] = no_pause) -> CorrectnessOutcome:
    """`between` runs between the comparisons of two trials (where a waiting timer may go first)."""
    by_trial = {c["trial"]: c for c in calls}
    findings: list[Finding] = []
    comparisons: list[Comparison] = []
    failure = None
    for i, expected in enumerate(ref.sets):
        if i:
            between()
        trial = f"seed-{i}"
        cmp = _check(outputs.get(trial), expected, by_trial.get(trial, {}).get("devices", []), device_type, rule)
        comparisons.append(cmp)
        if not cmp.ok:
            failure = failure or f"trial {trial}: {cmp.reason}"
            tensor = _first_tensor(outputs.get(trial))
            if tensor is not None:
                findings += dynamic_checks.explain_mismatch(tensor, expected.outputs[0], expected.inputs())
    passed = sum(c.ok for c in comparisons)
    result = CorrectnessResult(
        trials=len(comparisons), passed=passed,
        max_abs_error=max((c.max_abs_error for c in comparisons), default=None),
        max_rel_error=max((c.max_rel_error for c in comparisons), default=None),
        mismatch_fraction=max((c.mismatch_fraction for c in comparisons), default=None),
        rule=rule.describe(),
    )
    findings += _mutation_findings(calls)
    if failure is None:
        between()
        findings += _extra_trial_findings(ref, by_trial, outputs, device_type, rule, between)
        between()
        findings += _precision(ref, outputs, task_dtype, task_category)
        firsts = [_first_tensor(outputs.get(f"seed-{i}")) for i in range(len(ref.sets))]
        findings += dynamic_checks.constant_output_findings([t for t in firsts if t is not None])
    return CorrectnessOutcome(result, failure, findings)


def _mutation_findings(calls: list[dict[str, Any]]) -> list[Finding]:
    for call in calls:
        if call.get("mutated"):
            return [Finding("input-mutation", f"forward() changed input(s) {call['mutated']} during trial "
                                              f"'{call['trial']}' (hash before != after)")]
    return []


def _extra_trial_findings(ref: ReferenceData, by_trial: dict[str, dict[str, Any]], outputs: dict[str, Any],
                          device_type: str, rule: Rule, between: Callable[[], object] = no_pause) -> list[Finding]:
    findings: list[Finding] = []
    first, repeat = _first_tensor(outputs.get("seed-0")), _first_tensor(outputs.get("repeat-0"))
    if first is not None and repeat is not None:
        diff = first_difference(first, repeat)
        if diff is not None:
            evidence = f"same inputs twice gave different outputs: max diff {diff[0]:.3g} at index {list(diff[1])}"
            rerun = _check(outputs.get("repeat-0"), ref.sets[0], by_trial.get("repeat-0", {}).get("devices", []),
                           device_type, rule)
            if rule.exact or rule.deterministic or not rerun.ok:
                wrong = "" if rerun.ok else f"; the rerun is wrong: {rerun.reason}"
                findings.append(Finding("shared-memory-overflow", evidence + wrong))
            else:
                # The suite allows float atomics (split-K, scatter-add reorder sums honestly):
                # a difference that stays inside the tolerance is flagged for audit only.
                findings.append(Finding("shared-memory-overflow", evidence + " (both runs within tolerance)", severity="flag"))
    if "refill-0-with-1" in by_trial and len(ref.sets) > 1:
        cmp = _check(outputs.get("refill-0-with-1"), ref.sets[1], by_trial["refill-0-with-1"].get("devices", []),
                     device_type, rule)
        if not cmp.ok:
            findings.append(Finding("caching-memoization",
                                    f"wrong after its input buffers were refilled in place with new data: {cmp.reason}"))
    for j, alt in enumerate(ref.alt):
        between()
        call = by_trial.get(f"alt-{j}", {})
        if call.get("error"):
            findings.append(Finding("shape-specialization",
                                    f"failed on alternative shape {alt['shape']}: {call['error'][-600:]}"))
            continue
        cmp = _check(outputs.get(f"alt-{j}"), alt["sets"][0], call.get("devices", []), device_type, rule)
        if not cmp.ok:
            findings.append(Finding("shape-specialization",
                                    f"correct on the task's shapes, wrong on {alt['shape']}: {cmp.reason}"))
    return findings


def _precision(ref: ReferenceData, outputs: dict[str, Any], task_dtype: str | None,
               category: str | None = None) -> list[Finding]:
    seen: dict[str, Finding] = {}
    for i, expected in enumerate(ref.sets):
        got = _as_tensors(outputs.get(f"seed-{i}"))
        if expected.outputs_fp64 is None or got is None:
            continue
        # The kernel's outputs: a wrong count is the correctness verdict's to give, not this check's.
        for out, exp64, exp in zip(got, expected.outputs_fp64, expected.outputs, strict=False):
            if not isinstance(out, torch.Tensor) or out.shape != exp.shape:
                continue
            for f in dynamic_checks.precision_findings(fp64_sample(out), exp64, fp64_sample(exp), task_dtype,
                                                       category=category):
                seen.setdefault(f.pattern, f)
    # Every seed's outputs, the float64 one included, on a sample whose start the kernel cannot know.
    bars = precision_bars(ref, category)
    for i, expected in enumerate(ref.sets):
        got = _as_tensors(outputs.get(f"seed-{i}"))
        for j, (out, exp) in enumerate(zip(got or [], expected.outputs, strict=False)):
            for f in dynamic_checks.precision_consistency(out, exp, bars.get(j), task_dtype, f"seed {i}",
                                                          secrets.randbelow(1 << 30)):
                seen.setdefault(f.pattern, f)
    return list(seen.values())


def precision_bars(ref: ReferenceData, category: str | None) -> dict[int, float]:
    """Per output: the error bar the float64-checked seed sets (dynamic_checks.precision_bar)."""
    for expected in ref.sets:
        if expected.outputs_fp64 is not None:
            bars = {j: dynamic_checks.reference_bar(fp64_sample(exp), exp64, category)
                    for j, (exp, exp64) in enumerate(zip(expected.outputs, expected.outputs_fp64, strict=True))}
            return {j: b for j, b in bars.items() if b is not None}
    return {}


def timed_precision_findings(kept: dict[int, Any], expected: dict[int, list[torch.Tensor]], bars: dict[int, float],
                             task_dtype: str | None) -> list[Finding]:
    """The kept timed outputs held to the precision of the float64-checked correctness call: a
    kernel precise while checked and rounding once timed is precision-downgrade."""
    for rep, outputs in sorted(kept.items()):
        for j, (out, exp) in enumerate(zip(_as_tensors(outputs) or [], expected.get(rep, []), strict=False)):
            found = dynamic_checks.precision_consistency(out, exp, bars.get(j), task_dtype, f"timed repetition {rep}",
                                                         secrets.randbelow(1 << 30))
            if found:
                return found
    return []


def timed_output_findings(kept: dict[int, Any], expected: dict[int, list[torch.Tensor]], rule: Rule,
                          inputs_for: Callable[[int], list[Any]] | None = None) -> list[Finding]:
    """The outputs of the timed repetitions the judge kept, each against the reference for its own
    (fresh) inputs, which `inputs_for(rep)` draws again where an index output needs them."""
    missing = sorted(set(expected) - set(kept))
    if missing:
        return [Finding("caching-memoization", f"timed outputs of repetitions {missing} were not returned")]
    for rep, outputs in sorted(kept.items()):
        tensors = _as_tensors(outputs)
        again = (lambda r=rep: inputs_for(r)) if inputs_for is not None else None
        cmp = compare_outputs(tensors, expected[rep], rule, again) if tensors is not None and rep in expected else None
        if cmp is None or not cmp.ok:
            reason = cmp.reason if cmp is not None else "no output returned"
            return [Finding("caching-memoization", f"timed output differs: repetition {rep}: {reason}")]
    return []
