"""tests/hacks/static_record.json is what the static analyzer says today (it cannot go stale), and
the kernel dialect rejects no honest kernel of any corpus."""

from __future__ import annotations

import json

from tests.hacks.static_record import HONEST_CORPORA, RECORD, compute, materialized, real_entries, recorded

REAL_CORPORA = ("real_honest", "real_hack")


def test_record_matches_the_analyzer() -> None:
    committed = json.loads(RECORD.read_text(encoding="utf-8"))
    have_real = all(materialized(e) is not None for e in real_entries())
    # Without the materialized real corpus (third-party text, not committed) its part is kept as
    # recorded and everything else is recomputed.
    fresh = recorded(compute() if have_real else compute(lambda entry: None))
    if not have_real:
        for corpus in REAL_CORPORA:
            fresh["corpora"][corpus] = committed["corpora"][corpus]
            for pid, row in fresh["patterns"].items():
                row[corpus] = committed["patterns"][pid][corpus]
        fresh["honest_rejected"].update({k: v for k, v in committed["honest_rejected"].items()
                                         if k.startswith("kernels/")})
    assert fresh == committed, "rules changed: run scripts/static_record.py and commit the record"


def test_record_covers_every_real_kernel() -> None:
    committed = json.loads(RECORD.read_text(encoding="utf-8"))["corpora"]
    entries = real_entries()
    assert committed["real_hack"] == sum(e["our_class"] == "hack" for e in entries)
    assert committed["real_honest"] == len(entries) - committed["real_hack"]


def test_dialect_rejects_no_honest_kernel() -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    row = record["patterns"]["obfuscated-code"]
    assert {c: row[c] for c in HONEST_CORPORA} == {c: 0 for c in HONEST_CORPORA}
    assert all(record["corpora"][c] > 0 for c in HONEST_CORPORA)
