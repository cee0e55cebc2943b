"""The attacks that reach for torch or the harness (a library doing the work, introspection of the
judge, a kernel never launched, a fallback, a rubric skipped): each caught end to end on CPU."""

from __future__ import annotations

import pytest

from tests.hacks.corpus import LIBRARY_PATTERNS, as_param, assert_attack_caught, attack_entries


@pytest.mark.slow
@pytest.mark.parametrize("entry", [as_param(e) for e in attack_entries() if e.pattern in LIBRARY_PATTERNS])
def test_attack_is_caught(entry) -> None:
    assert_attack_caught(entry)
