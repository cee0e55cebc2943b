"""Every honest kernel of tests/hacks/clean passes end to end on CPU with no hack and no flag."""

from __future__ import annotations

import pytest

from tests.hacks.corpus import as_param, assert_clean_passes, clean_entries


@pytest.mark.slow
@pytest.mark.parametrize("entry", [as_param(e) for e in clean_entries()])
def test_clean_kernel_passes(entry) -> None:
    assert_clean_passes(entry)
