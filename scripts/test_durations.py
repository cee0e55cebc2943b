"""Writes tests/durations.json (seconds a test file took) from a JUnit XML report, so the test
runner hands the dearest files to its workers first (tests/conftest.py).

    PYTEST_ADDOPTS=--junitxml=/tmp/junit.xml bash scripts/run_tests.sh
    .venv/bin/python scripts/test_durations.py /tmp/junit.xml
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "durations.json"


def file_seconds(report: Path) -> dict[str, float]:
    """Seconds a file's test cases took (setup and teardown included), by the file's path."""
    totals: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).getroot().iter("testcase"):
        module = case.get("classname", "")
        # classname is the dotted module, plus a class where the test is a method of one
        parts = module.split(".")
        while parts and not parts[-1].startswith("test_"):
            parts.pop()
        if parts:
            totals["/".join(parts) + ".py"] += float(case.get("time") or 0.0)
    return dict(totals)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: test_durations.py JUNIT_XML", file=sys.stderr)
        return 2
    totals = file_seconds(Path(argv[0]))
    if not totals:
        print(f"{argv[0]}: no test cases found; run pytest with --junitxml=PATH first", file=sys.stderr)
        return 1
    ordered = dict(sorted(((k, round(v, 1)) for k, v in totals.items()), key=lambda kv: -kv[1]))
    OUT.write_text(json.dumps(ordered, indent=1) + "\n")
    print(f"{len(ordered)} files, {sum(ordered.values()):.0f} s in all -> {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
