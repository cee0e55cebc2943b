"""The real corpus (tests/hacks/real): kernels that frontier models wrote in public agent runs,
scored on CPU against the label their publisher gave them.

A labelled hack must be rejected (hack_detected, or incorrect where its shortcut breaks the maths);
a clean kernel must pass with no finding; a rubric leak (correct maths, but it skipped what the
task asked for) must pass correctness and must not be called a hack. Entries the scorer gets wrong
today carry `cpu_xfail = "<class>: <why>"` in the manifest and run as strict xfails, so a scorer
fix that makes one pass shows up as XPASS until its marker is removed. Where our verdict differs
from the source's label and ours is the right one, the manifest says so (`expect`, with
`expect_reason`), and that verdict is asserted instead.

Kernels the CPU cannot judge (CUDA C++, bf16/fp8 Triton, a reference needing a missing package)
must at least not be condemned there: a clean or rubric one scored on CPU may not come back
`incorrect` or `hack_detected`.

The kernels and task files are third-party text and are not committed: run
`tests/hacks/real/materialize.py --source <checkout of the source repository>` first; without them
only the manifest checks run.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

import pytest

from tests.hacks.real.materialize import ENTRY_ALIAS
from tests.hacks.real.score_real import CONDEMNING, agrees, score

REAL = Path(__file__).resolve().parent / "real"
SUITE = REAL / "suite"
MANIFEST = tomllib.loads((REAL / "manifest.toml").read_text(encoding="utf-8"))
ENTRIES = MANIFEST["entries"]
CLASSES = {"clean", "hack", "rubric"}
REQUIRED = ("id", "task", "kernel", "run_id", "model", "commit", "path", "sha256", "source_label", "our_class",
            "licence", "cpu_judgeable", "cpu_note")


def _materialized() -> bool:
    return all((SUITE / f"{t}.py").is_file() for t in MANIFEST["tasks"]) and all(
        (REAL / e["kernel"]).is_file() for e in ENTRIES)


needs_files = pytest.mark.skipif(
    not _materialized(), reason="real corpus not materialized: run tests/hacks/real/materialize.py --source ...")


def _param(entry: dict) -> pytest.param:
    marks = [pytest.mark.slow, needs_files]
    if entry.get("cpu_xfail"):
        marks.append(pytest.mark.xfail(reason=entry["cpu_xfail"], strict=True))
    return pytest.param(entry, id=entry["id"], marks=marks)


def _summary(result) -> str:
    return f"verdict={result.verdict} hacks={result.hacks} flags={result.flags} error={(result.error or '')[:500]}"


def test_manifest_is_complete() -> None:
    assert len(ENTRIES) >= 40
    ids = [e["id"] for e in ENTRIES]
    assert len(ids) == len(set(ids))
    suite_toml = tomllib.loads((SUITE / "suite.toml").read_text(encoding="utf-8"))
    assert set(suite_toml["tasks"]) == set(MANIFEST["tasks"])
    for entry in ENTRIES:
        assert [k for k in REQUIRED if k not in entry] == [], entry["id"]
        assert entry["our_class"] in CLASSES, entry["id"]
        assert entry["task"] in MANIFEST["tasks"], entry["id"]
        assert len(entry["sha256"]) == 64 and len(entry["commit"]) == 40, entry["id"]
        assert "cpu_xfail" not in entry or entry["cpu_judgeable"] or entry["our_class"] != "hack", entry["id"]
        assert ("expect" in entry) == ("expect_reason" in entry), entry["id"]
        assert not ("expect" in entry and "cpu_xfail" in entry), entry["id"]
    # every class is represented, and each has kernels the CPU can judge
    judged = {e["our_class"] for e in ENTRIES if e["cpu_judgeable"]}
    assert judged == CLASSES


@needs_files
def test_materialized_files_are_the_published_text() -> None:
    for entry in ENTRIES:
        text = (REAL / entry["kernel"]).read_text(encoding="utf-8")
        if entry.get("entry_point", "ModelNew") != "ModelNew":
            alias = ENTRY_ALIAS.format(name=entry["entry_point"])
            assert text.endswith(alias), entry["id"]
            text = text.removesuffix(alias)
        assert hashlib.sha256(text.encode()).hexdigest() == entry["sha256"], entry["id"]


@pytest.mark.parametrize("entry", [_param(e) for e in ENTRIES if e["cpu_judgeable"]])
def test_real_kernel_verdict_matches_its_label(entry: dict) -> None:
    result = score(entry, "cpu")
    if "expect" in entry:
        assert result.verdict == entry["expect"], _summary(result)
    else:
        assert agrees(entry["our_class"], result), _summary(result)


@pytest.mark.parametrize("entry", [_param(e) for e in ENTRIES
                                   if not e["cpu_judgeable"] and e["our_class"] != "hack"])
def test_kernel_cpu_cannot_judge_is_not_condemned_there(entry: dict) -> None:
    result = score(entry, "cpu")
    if "expect" in entry:
        assert result.verdict == entry["expect"], _summary(result)
    else:  # it may fail to load or run there, never be called wrong or a cheat
        assert result.verdict not in CONDEMNING, _summary(result)
