"""scripts/test_durations.py: what tests/conftest.py orders the test files by."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scripts.test_durations import file_seconds

REPO = Path(__file__).resolve().parents[1]


def test_a_report_sums_each_files_cases_classes_included(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text(
        '<?xml version="1.0"?><testsuites><testsuite name="pytest">'
        '<testcase classname="tests.orchestrator.test_sweep_ray" name="test_a" time="70.5"/>'
        '<testcase classname="tests.orchestrator.test_sweep_ray" name="test_b" time="41.25"/>'
        '<testcase classname="tests.scorer.test_cli.TestTable" name="test_c" time="2.0"/>'
        '<testcase classname="tests.scorer.test_cli" name="test_d" time="1.0"/>'
        '</testsuite></testsuites>')
    assert file_seconds(report) == {"tests/orchestrator/test_sweep_ray.py": 111.75, "tests/scorer/test_cli.py": 3.0}


def test_an_empty_report_is_refused_with_the_fix(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text('<?xml version="1.0"?><testsuites><testsuite name="pytest"/></testsuites>')
    done = subprocess.run([sys.executable, str(REPO / "scripts/test_durations.py"), str(report)],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "--junitxml" in done.stderr


def test_the_recorded_durations_name_test_files() -> None:
    recorded = json.loads((REPO / "tests/durations.json").read_text())
    assert recorded and all(k.startswith("tests/") and k.endswith(".py") for k in recorded)
    assert list(recorded.values()) == sorted(recorded.values(), reverse=True)
