"""A pytest plugin for scripts/gpu_check.py's pytest part: each failure's report is appended to the
file KA_PYTEST_FAILURES names as it happens, so a part that the device call's budget cuts off
still leaves why its failed tests failed (pytest prints them only at its end)."""

from __future__ import annotations

import os
from typing import Any


def pytest_runtest_logreport(report: Any) -> None:
    path = os.environ.get("KA_PYTEST_FAILURES")
    if path and report.failed:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"== {report.nodeid} ({report.when})\n{report.longreprtext}\n")
