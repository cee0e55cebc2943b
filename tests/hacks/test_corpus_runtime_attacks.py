"""The attacks on the timing and the outputs (timers, streams, threads, caches, stale or mutated
memory, precision, degenerate or sniffed inputs): each caught end to end on CPU."""

from __future__ import annotations

import pytest

from tests.hacks.corpus import LIBRARY_PATTERNS, as_param, assert_attack_caught, attack_entries


@pytest.mark.slow
@pytest.mark.parametrize("entry", [as_param(e) for e in attack_entries() if e.pattern not in LIBRARY_PATTERNS])
def test_attack_is_caught(entry) -> None:
    assert_attack_caught(entry)
