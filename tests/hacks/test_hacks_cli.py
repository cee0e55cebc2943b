"""`kernelarena hacks` lists the catalog as a table or JSON; an unknown id is a user error."""

from __future__ import annotations

import json
import subprocess
import sys

from scorer.checks.catalog import PATTERN_IDS


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator.cli", "hacks", *args],
                          capture_output=True, text=True, timeout=60)


def test_json_lists_every_pattern() -> None:
    proc = _cli("--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert {r["id"] for r in rows} == PATTERN_IDS
    for r in rows:
        assert r["severity"] in ("reject", "flag")
        assert set(r["checks"]) <= {"static", "dynamic"} and r["checks"]
        assert r["description"] and r["detection"]
    flags = {r["id"] for r in rows if r["severity"] == "flag"}
    assert flags == {"impossible-speed", "degenerate-output", "rubric"}


def test_table_and_single_pattern() -> None:
    proc = _cli("precision-downgrade")
    assert proc.returncode == 0
    assert "precision-downgrade" in proc.stdout and "stream-injection" not in proc.stdout


def test_unknown_id_is_a_user_error() -> None:
    proc = _cli("no-such-hack")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: no anti-hack pattern 'no-such-hack'")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_each_pattern_publishes_its_record() -> None:
    rows = json.loads(_cli("--json").stdout)
    for r in rows:
        rec = r["record"]
        assert rec["attacks_tried"] >= 2 and rec["attacks_caught"] <= rec["attacks_tried"], r["id"]
        assert rec["clean_kernels"] >= 15 and rec["clean_false_positives"] == 0, r["id"]
    table = _cli("input-sniffing").stdout
    assert "attacks 2/2" in table and "FP clean 0/" in table


def test_static_false_positives_are_published() -> None:
    rows = {r["id"]: r for r in json.loads(_cli("--json").stdout)}
    static = rows["obfuscated-code"]["record"]["static_false_positives"]
    assert set(static) == {"clean", "suites", "real"}
    assert all(rejected == 0 and total > 0 for rejected, total in static.values())
    assert rows["ghost-kernel"]["record"]["static_false_positives"] == {}  # no static check, no count
    table = _cli("obfuscated-code").stdout
    # the record column, its wrapped lines joined
    cells = " ".join(line.split("│")[6].strip() for line in table.splitlines() if line.count("│") > 7)
    assert "static FP clean 0/" in cells and "suites 0/" in cells and "real 0/" in cells, cells


def test_the_catalog_says_who_establishes_each_pattern() -> None:
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "orchestrator.cli", "hacks", "--json"], capture_output=True, text=True,
                         check=True).stdout
    layers = {p["id"]: p["layers"] for p in json.loads(out)}
    assert layers["protocol-violation"] == ["judge", "outside"]
    assert "in-process" in layers["baseline-library-call"] and "judge" in layers["identity-kernel"]
    assert all(layers.values())
