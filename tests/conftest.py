"""Hooks for the whole test run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.shared.waiting import wait_until

# scripts/ci_checks.sh builds the sandbox images beside the test run and writes the build's exit
# status to this file when it ends; a test that needs Docker waits for it.
IMAGES_STATUS = "KA_IMAGES_STATUS"
IMAGES_WAIT_S = 900.0


def wait_for_images() -> None:
    """Returns once the build has ended (or after IMAGES_WAIT_S): the test's own Docker check then
    skips, or fails where CI is set, if the images are not there. Raising here would end the run."""
    path = os.environ.get(IMAGES_STATUS)
    if not path:
        return
    try:
        wait_until(Path(path).exists, IMAGES_WAIT_S, f"the sandbox images' build ({path})", poll_s=0.5)
    except AssertionError:
        pass


# A wrapper outside pytest-timeout's, so the wait is not counted in the test's own time limit.
@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if item.get_closest_marker("docker") is not None:
        wait_for_images()
    yield
