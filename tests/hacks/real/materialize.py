"""Write the real corpus's kernels and task files from a local git checkout of their source.

The corpus holds third-party text (kernels written by models in public agent runs, and the task
files they were given), so only its manifest is committed. This copies each file out of the
source repository at the commit the manifest names, checks its sha256, and writes it where the
tests look: `kernels/<id>.py` and `suite/<task>.py`.

    python tests/hacks/real/materialize.py --source /path/to/kernelbench.com   # a git dir or work tree
"""

from __future__ import annotations

import argparse
import hashlib
import html
import re
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.toml"
# Runs published only as HTML pages keep their solution.py in the page's first code pane.
# The source's harness imported `solution.Model`; KernelArena's contract is `ModelNew`.
ENTRY_ALIAS = "\n\nModelNew = {name}  # added by materialize.py: the source's harness called this class\n"
_HTML_SOLUTION = re.compile(r'id="tab-solution"><pre><code class="language-python">(.*?)</code></pre>', re.S)


def _fail(message: str) -> SystemExit:
    """A user error: one line on stderr, exit status 2."""
    print(f"materialize: {message}", file=sys.stderr)
    return SystemExit(2)


def _show(source: Path, commit: str, path: str) -> str:
    proc = subprocess.run(["git", "-C", str(source), "show", f"{commit}:{path}"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise _fail(f"{source}: no {path} at {commit[:12]}; point --source at a clone of the source with full history")
    return proc.stdout


def extract(source: Path, item: dict) -> str:
    text = _show(source, item["commit"], item["path"])
    if item.get("extract", "file") == "html-solution":
        match = _HTML_SOLUTION.search(text)
        if match is None:
            raise _fail(f"{item['path']}: no solution pane in the page at {item['commit'][:12]}")
        text = html.unescape(match.group(1))
    digest = hashlib.sha256(text.encode()).hexdigest()
    if digest != item["sha256"]:
        raise _fail(f"{item['path']} at {item['commit'][:12]}: sha256 {digest[:12]} is not the manifest's "
                    f"{item['sha256'][:12]}")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True, help="git checkout of the source repository")
    args = parser.parse_args(argv)
    manifest = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))
    if subprocess.run(["git", "-C", str(args.source), "rev-parse", "--git-dir"], capture_output=True).returncode:
        raise _fail(f"{args.source} is not a git checkout; clone {manifest['source']['repo']} (full history) "
                    "and pass its path")
    for task_id, task in manifest["tasks"].items():
        out = HERE / "suite" / f"{task_id}.py"
        out.write_text(extract(args.source, task), encoding="utf-8")
    (HERE / "kernels").mkdir(exist_ok=True)
    for entry in manifest["entries"]:
        text = extract(args.source, entry)
        if entry.get("entry_point", "ModelNew") != "ModelNew":
            text += ENTRY_ALIAS.format(name=entry["entry_point"])
        (HERE / entry["kernel"]).write_text(text, encoding="utf-8")
    print(f"wrote {len(manifest['tasks'])} task files and {len(manifest['entries'])} kernels under {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
