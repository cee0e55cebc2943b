"""Each static pattern's rejections on every corpus; the honest corpora's go to tests/hacks/static_record.json.

    .venv/bin/python scripts/static_record.py                       # real corpus materialized
    .venv/bin/python scripts/static_record.py --real-source /tmp/kbcom   # or read from its source clone

Runs the static analyzer only (seconds). `kernelarena hacks` prints the false-positive counts from
the file; tests/hacks/test_static_record.py recomputes it, so a rule change that moves a count fails
until the file is written again. Without the real corpus the script refuses: the record would lose it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hacks.static_record import RECORD, compute, git_reader, materialized, real_entries, recorded  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-source", type=Path, help="git clone of the real corpus's source (full history)")
    args = parser.parse_args(argv)
    read = git_reader(args.real_source) if args.real_source else materialized
    missing = [e["kernel"] for e in real_entries() if not args.real_source and materialized(e) is None]
    if missing:
        print(f"static_record: {len(missing)} real-corpus kernels are not materialized (tests/hacks/real/README.md); "
              "pass --real-source", file=sys.stderr)
        return 2
    data = compute(read)
    RECORD.write_text(json.dumps(recorded(data), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    sizes = data["corpora"]
    for pid, row in data["patterns"].items():
        print(f"{pid:24} honest rejected: " + ", ".join(f"{c} {row[c]}/{sizes[c]}" for c in ("clean", "suites", "real_honest"))
              + f"; real hacks {row['real_hack']}/{sizes['real_hack']}; own attacks {row['own_attacks'][0]}/"
              f"{row['own_attacks'][1]}; all attacks {row['attacks']}/{sizes['attacks']}")
    print(f"wrote {RECORD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
