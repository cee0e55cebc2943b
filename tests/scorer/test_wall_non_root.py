"""A judge that is not root (how many users run the scorer): real scorings on the demo suite, on
CPU, by an unprivileged uid. Its kernel gets no uid of its own, so the wall rests on a user
namespace, the covered temp folder and the descriptors it holds; the attacks below passed through
those holes before (a folder descriptor from before the wall, clone with namespace flags, a
/dev/shm shared with the host and every later scoring).

CI runs as root: the test drops to `nobody` with setpriv, in a mount namespace of its own where an
interpreter below a folder closed to other users (pyenv under a 0700 /root) is bound back
readable, as a user's own installation would be.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scorer.workers import wall

REPO = Path(__file__).resolve().parents[2]
ATTACKS = Path(__file__).parent / "wall_attacks"
CLEAN = REPO / "suites" / "demo" / "solutions" / "swish" / "kernel.py"
LEFT = Path("/dev/shm/kernelarena-left-by-a-kernel")

# Scores each kernel in one judge process (its fork server serves them all) and prints one JSON
# line per kernel: the verdict, the patterns found and what `isolation` says.
_DRIVER = """
import json, sys
from pathlib import Path
from scorer.judge.scoring import score_kernel
from scorer.options import ScoreOptions
from scorer.tasks.suites import load_suite
suite = load_suite("demo")
for kernel, timed in json.loads(sys.argv[1]):
    score = score_kernel(suite, "swish", Path(kernel), device="cpu", options=ScoreOptions(
        device="cpu", seeds=2, repetitions=5, warmup=1, alt_shapes=False, skip_timing=not timed))
    print(json.dumps({"kernel": Path(kernel).stem, "verdict": score.verdict, "error": score.error,
                      "patterns": sorted({h["pattern"] for h in score.to_dict()["hacks"]}),
                      "isolation": score.isolation}), flush=True)
"""


def _unprivileged_prefix(top: Path) -> list[str]:
    """The command line that runs what follows as nobody, with HOME and TMPDIR of its own under
    `top`, the interpreter readable."""
    home, tmp = top / "home", top / "tmp"
    for folder in (home, tmp):
        folder.mkdir()
        shutil.chown(folder, "nobody", "nogroup")
    os.chmod(top, 0o755)
    base = os.path.realpath(sys.base_prefix)
    closed = wall._closed_ancestor(base)
    steps = []
    if closed is not None:
        # Only the interpreter's installation bound back over an empty, passable cover.
        keep = top / "interpreter"
        keep.mkdir()
        steps = [f"mount --bind '{base}' '{keep}'", f"mount -t tmpfs -o mode=755 tmpfs '{closed}'",
                 f"mkdir -p '{base}'", f"mount --bind '{keep}' '{base}'"]
    drop = (f"exec setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all "
            f"env HOME='{home}' TMPDIR='{tmp}' TRITON_INTERPRET=1 PYTHONPATH='{REPO}' \"$@\"")
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", "; ".join(steps + [drop]), "sh"]


def _needs() -> str | None:
    if os.geteuid() != 0:
        return "needs root to drop to an unprivileged uid"
    if not (shutil.which("setpriv") and shutil.which("unshare")):
        return "needs util-linux's setpriv and unshare"
    probe = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "unshare", "-U",
                            "-r", "true"], capture_output=True)
    if probe.returncode != 0:
        return f"this host gives an unprivileged uid no user namespace: {probe.stderr.decode()[:200]}"
    return None


@pytest.mark.slow
def test_a_judge_that_is_not_root_walls_the_kernel_in(tmp_path: Path) -> None:
    why = _needs()
    if why:
        pytest.skip(why)
    LEFT.unlink(missing_ok=True)
    kernels = [(str(CLEAN), True)] + [(str(ATTACKS / f"{name}.py"), False) for name in
                                      ("inherited_fds", "clone_namespaces", "shm_leave", "shm_look")]
    try:
        run = subprocess.run(_unprivileged_prefix(tmp_path) + [sys.executable, "-c", _DRIVER, json.dumps(kernels)],
                             capture_output=True, text=True, timeout=900, cwd=tmp_path / "home")
        host_shm_left = LEFT.exists()
    finally:
        LEFT.unlink(missing_ok=True)
    assert run.returncode == 0, run.stderr[-3000:]
    scores = {s["kernel"]: s for s in map(json.loads, run.stdout.splitlines())}
    clean = scores["kernel"]
    assert clean["verdict"] == "passed", clean
    isolation = clean["isolation"]
    # The uid stays the judge's (no uid of its own without root); every wall is in force, the
    # descriptors and the private /dev/shm included, read from outside.
    assert isolation["uid"] == 65534 and isolation["complete"] is True and isolation["missing"] == [], isolation
    assert set(isolation["walls"]) == set(wall.WALLS)
    for name in ("inherited_fds", "clone_namespaces", "shm_leave", "shm_look"):
        score = scores[name]
        assert score["isolation"]["complete"] is True, score
        # Each returns its input where its attack reached anything: identity-kernel, or incorrect.
        assert score["verdict"] != "incorrect" and "identity-kernel" not in score["patterns"], score
    # The hole this guards: from the spool's descriptor a kernel could list and write the judge's folders.
    assert not list(tmp_path.rglob("kernelarena_fd_escape*")), list(tmp_path.rglob("kernelarena_fd_escape*"))
    assert not Path("/tmp/kernelarena_fd_escape_tmp").exists()
    # shm_leave is correct only where its file was written: in its own /dev/shm, seen by no one.
    assert not host_shm_left, "a kernel's /dev/shm file reached the host's /dev/shm"
