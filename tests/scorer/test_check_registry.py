"""Every check registers through one interface, and the catalog's layers are what the registered
checks say (computed from them, never written twice): a pattern is listed as outside observation or
in-process evidence only where a check of that layer can find it."""

from __future__ import annotations

import scorer.judge.rulings  # noqa: F401  (registers every check)
from scorer.checks.catalog import PATTERNS
from scorer.judge import registry


def test_every_pattern_has_a_check_and_lists_its_checks_layers() -> None:
    assert [p.id for p in PATTERNS if not registry.layers_of(p.id)] == []
    # The catalog's layers are the registered checks', in the order the kernel can reach them.
    assert registry.layers_of("timer-patching") == ("judge", "outside", "in-process", "static")
    assert registry.layers_of("lazy-evaluation") == ("in-process",)
    assert registry.checks_of("stream-injection") == ("static", "dynamic")
    assert registry.checks_of("rubric") == ("static",) and registry.checks_of("noop-kernel") == ("dynamic",)


def test_checks_name_only_catalog_patterns_and_phases_the_judge_rules_at() -> None:
    known = {p.id for p in PATTERNS}
    for check in registry.checks():
        assert check.patterns and set(check.patterns) <= known, check.id
        assert set(check.phases) <= {"source", "load", "correctness", "timing", "batch", "clock"}, check.id
        assert check.what, check.id


def test_every_in_process_pattern_is_ruled_in_the_judge() -> None:
    # Observed in the worker and ruled in the judge (scorer/judge/rulings/): the worker sends the
    # observation, never a finding (a reply with one does not parse: test_in_process_rulings.py).
    ruled = {p for c in registry.checks() if c.layer == "in-process" for p in c.patterns}
    assert {"ghost-kernel", "lazy-evaluation", "input-mutation", "baseline-library-call", "timer-patching",
            "harness-introspection", "thread-injection", "cache-residency"} <= ruled
    assert not any(hasattr(c, "worker_findings") for c in registry.checks())
