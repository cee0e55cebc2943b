"""Each pattern's record on the repository's corpora, for `kernelarena hacks` and docs/HACKS.md.

Read from the corpus files themselves, whose every entry the tests score end to end:

* **attacks** (tests/hacks/attacks/<pattern>/): tried = files; caught = those not marked
  `# xfail:` (a known gap), counting `# neutralized:` ones (the protocol leaves them nothing to
  gain, and the test fails if they draw their pattern again). tests/hacks/test_corpus.py fails
  when an unmarked attack is not caught.
* **clean corpus** (tests/hacks/clean/): every kernel must pass with no finding of any pattern
  (the same test), so a pattern's false positives there are those marked xfail: none.
* **real corpus** (tests/hacks/real/manifest.toml): model-written kernels labelled by their
  publisher. A pattern's false positives are the clean or rubric entries whose `cpu_xfail` (a
  disagreement the test expects) names it; tests/hacks/test_real_corpus.py runs them as strict
  xfails, so one that stops disagreeing fails until its mark is removed.
* **static analyzer alone** (tests/hacks/static_record.json, written by scripts/static_record.py
  and recomputed by tests/hacks/test_static_record.py): for each pattern with a static check, the
  honest kernels its static rules would reject in the clean corpus, the suites' reference
  solutions and the real corpus's clean and rubric kernels.

Outside a repository checkout (no tests/ folder) the record is empty.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from scorer.checks.catalog import PATTERNS

_ROOT = Path(__file__).resolve().parents[2] / "tests" / "hacks"
_XFAIL = re.compile(r"^#\s*xfail:", re.M)
_NEUTRALIZED = re.compile(r"^#\s*neutralized:", re.M)


@dataclass(frozen=True)
class PatternRecord:
    pattern: str
    attacks_tried: int
    attacks_caught: int
    neutralized: int
    clean_kernels: int
    clean_false_positives: int
    real_honest: int  # clean + rubric entries of the real corpus
    real_false_positives: int
    # corpus -> [honest kernels the static rules alone reject, kernels]; empty without a static check
    static_false_positives: dict[str, list[int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, int | str]:
        return dict(self.__dict__)


def _head(path: Path) -> str:
    return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[:8])


def records(root: Path = _ROOT) -> dict[str, PatternRecord]:
    if not (root / "attacks").is_dir():
        return {}
    clean = [_head(c) for c in sorted((root / "clean").glob("*.py"))]
    real: list[dict] = []
    manifest = root / "real" / "manifest.toml"
    if manifest.is_file():
        real = tomllib.loads(manifest.read_text(encoding="utf-8")).get("entries", [])
    honest = [e for e in real if e.get("our_class") in ("clean", "rubric")]
    static = _static_record(root / "static_record.json")
    out: dict[str, PatternRecord] = {}
    for p in PATTERNS:
        files = sorted((root / "attacks" / p.id).glob("*.py"))
        heads = [_head(f) for f in files]
        gaps = sum(bool(_XFAIL.search(h)) for h in heads)
        out[p.id] = PatternRecord(
            pattern=p.id,
            attacks_tried=len(files),
            attacks_caught=len(files) - gaps,
            neutralized=sum(bool(_NEUTRALIZED.search(h)) for h in heads),
            clean_kernels=len(clean),
            clean_false_positives=sum(bool(_XFAIL.search(h)) and p.id in h for h in clean),
            real_honest=len(honest),
            real_false_positives=sum(p.id in str(e.get("cpu_xfail", "")) for e in honest),
            static_false_positives=static.get(p.id, {}),
        )
    return out


def _static_record(path: Path) -> dict[str, dict[str, list[int]]]:
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    sizes = data["corpora"]
    return {pid: {label: [row[corpus], sizes[corpus]] for label, corpus in _STATIC_CORPORA}
            for pid, row in data["patterns"].items()}


_STATIC_CORPORA = (("clean", "clean"), ("suites", "suites"), ("real", "real_honest"))
