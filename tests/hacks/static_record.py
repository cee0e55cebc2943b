"""The static analyzer alone over every corpus: which kernels each static pattern would reject.

Fast (no workers, no scoring), so it is the false-positive measure of the static rules, the kernel
dialect (`obfuscated-code`) first among them. Corpora: the clean corpus (tests/hacks/clean), the
suites' reference solutions (suites/*/solutions/*/kernel.py), the real corpus's kernels labelled
clean or rubric (honest) and hack (tests/hacks/real, materialized: its README says how), and the
attack corpus (tests/hacks/attacks). `scripts/static_record.py` prints it all and writes the honest
corpora's part and the real hacks' (`recorded`) to tests/hacks/static_record.json, which `kernelarena
hacks` shows; test_static_record.py recomputes it. The attack counts are printed, not recorded: a new
attack kernel is the attack corpus's business (its tests score each one), not a stale record.
Only reject-severity findings count: a flag rejects nothing.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import scorer.judge.rulings  # noqa: F401  (registers every check)
from scorer.checks.catalog import PATTERNS
from scorer.checks.static import analyze_source
from scorer.judge.registry import checks_of
from scorer.tasks.suites import LibraryPolicy, load_suite
from tests.hacks.corpus import REPO, attack_entries, clean_entries, suite_for

RECORD = REPO / "tests" / "hacks" / "static_record.json"
REAL = REPO / "tests" / "hacks" / "real"
HONEST_CORPORA = ("clean", "suites", "real_honest")


@dataclass(frozen=True)
class Kernel:
    corpus: str  # clean | suites | real_honest | real_hack | attacks
    name: str  # a stable label: the path under the repository (the real corpus: its kernel path)
    text: str
    policy: LibraryPolicy
    dtype: str | None
    own_pattern: str | None = None  # an attack's folder


def _suite_solutions() -> Iterator[Kernel]:
    for path in sorted(REPO.glob("suites/*/solutions/*/kernel.py")):
        suite = load_suite(path.parents[2])
        task = suite.tasks.get(path.parent.name)
        yield Kernel("suites", str(path.relative_to(REPO)), path.read_text(encoding="utf-8"), suite.policy,
                     task.dtype if task else None)


def real_entries() -> list[dict]:
    return tomllib.loads((REAL / "manifest.toml").read_text(encoding="utf-8"))["entries"]


def _real(read: Callable[[dict], str | None]) -> Iterator[Kernel]:
    # The manifest's policy and dtypes: its task files are third-party text, materialized or not.
    manifest = tomllib.loads((REAL / "suite" / "suite.toml").read_text(encoding="utf-8"))
    policy = LibraryPolicy.from_dict(manifest.get("policy", {}))
    for entry in real_entries():
        text = read(entry)
        if text is None:
            continue
        corpus = "real_hack" if entry["our_class"] == "hack" else "real_honest"
        yield Kernel(corpus, entry["kernel"], text, policy, manifest["tasks"].get(entry["task"], {}).get("dtype"))


def materialized(entry: dict) -> str | None:
    path = REAL / entry["kernel"]
    return path.read_text(encoding="utf-8") if path.is_file() else None


def kernels(read_real: Callable[[dict], str | None] = materialized) -> Iterator[Kernel]:
    for e in clean_entries():
        yield Kernel("clean", str(e.path.relative_to(REPO)), e.path.read_text(encoding="utf-8"), suite_for(e).policy,
                     "float32")
    yield from _suite_solutions()
    yield from _real(read_real)
    for e in attack_entries():
        yield Kernel("attacks", str(e.path.relative_to(REPO)), e.path.read_text(encoding="utf-8"),
                     suite_for(e).policy, "float32", e.pattern)


def rejecting_patterns(k: Kernel) -> list[str]:
    found = analyze_source(k.text, k.name, k.policy, task_dtype=k.dtype)
    return sorted({f.pattern for f in found if f.severity == "reject"})


def compute(read_real: Callable[[dict], str | None] = materialized) -> dict:
    """{"corpora": {corpus: kernels}, "patterns": {id: {corpus: rejected, "own_attacks": [caught, tried]}},
    "honest_rejected": {kernel: [patterns]}} for every pattern with a static check."""
    static = [p.id for p in PATTERNS if "static" in checks_of(p.id) and p.severity == "reject"]
    sizes: dict[str, int] = {c: 0 for c in (*HONEST_CORPORA, "real_hack", "attacks")}
    table = {pid: {**{c: 0 for c in sizes}, "own_attacks": [0, 0]} for pid in static}
    honest_rejected: dict[str, list[str]] = {}
    for k in kernels(read_real):
        sizes[k.corpus] += 1
        hits = rejecting_patterns(k)
        for pid in static:
            table[pid][k.corpus] += pid in hits
        if k.own_pattern in table:
            table[k.own_pattern]["own_attacks"][1] += 1
            table[k.own_pattern]["own_attacks"][0] += k.own_pattern in hits
        if k.corpus in HONEST_CORPORA and hits:
            honest_rejected[k.name] = hits
    return {"corpora": sizes, "patterns": table, "honest_rejected": honest_rejected}


def recorded(data: dict) -> dict:
    """The part of `compute`'s result that tests/hacks/static_record.json keeps."""
    keep = (*HONEST_CORPORA, "real_hack")
    return {"corpora": {c: data["corpora"][c] for c in keep},
            "patterns": {pid: {c: row[c] for c in keep} for pid, row in data["patterns"].items()},
            "honest_rejected": data["honest_rejected"]}


def git_reader(source: Path) -> Callable[[dict], str | None]:
    """Read the real corpus's kernels straight from a clone of their source (materialize.py's check)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("materialize", REAL / "materialize.py")
    assert spec and spec.loader
    materialize = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(materialize)

    def read(entry: dict) -> str:
        text = materialize.extract(source, entry)
        if entry.get("entry_point", "ModelNew") != "ModelNew":
            text += materialize.ENTRY_ALIAS.format(name=entry["entry_point"])
        return text
    return read
