"""lazy-evaluation, ruled in the judge on what the worker saw of the raw object forward returned
(replies.OutputObservation): only exact torch.Tensor objects (or a tuple/list of them) with real,
materialised storage are accepted; subclasses, wrappers, meta/fake tensors and tensors without
memory are evidence."""

from __future__ import annotations

from scorer.checks.catalog import Finding
from scorer.judge.registry import Check, register
from scorer.workers.replies import OutputObservation


@register
class OutputObject(Check):
    id = "output-object"
    layer = "in-process"
    patterns = ("lazy-evaluation",)
    what = ("the raw object forward returned, observed in the worker (scorer/checks/dynamic.py, observe_output), "
            "ruled in the judge: plain tensors with real storage")


def lazy_findings(seen: OutputObservation) -> list[Finding]:
    if seen.error is not None:
        return [Finding("lazy-evaluation", f"forward() returned an object that cannot be inspected: {seen.error}")]
    findings = []
    for item in seen.items:
        where = item.where
        if not item.plain:
            findings.append(Finding("lazy-evaluation", f"forward() returned {where} of type {item.type}, not a plain "
                                    "torch.Tensor (subclasses and proxies can defer work until the result is read)"))
        elif item.device == "meta":
            findings.append(Finding("lazy-evaluation", f"{where} is a meta tensor (no data)"))
        elif item.fake:
            findings.append(Finding("lazy-evaluation", f"{where} is a fake/functional tensor without real storage"))
        elif item.null_data:
            findings.append(Finding("lazy-evaluation", f"{where} has {item.numel} elements but a null data pointer"))
        elif item.numel and item.storage_bytes < item.needed_bytes:
            findings.append(Finding("lazy-evaluation",
                                    f"{where} views {item.needed_bytes} bytes but its storage holds {item.storage_bytes}"))
    return findings
