"""Temp folders named for their owner process: kept while it runs, removed once it is gone."""

import subprocess
import sys
from pathlib import Path

from sandbox.owners import owned_tempdir, owner_alive, process_identity, remove_orphaned_tempdirs

PREFIX = "kernelarena-ownertest-"


def _folder_of_a_process_that_exits() -> Path:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from sandbox.owners import owned_tempdir; "
            f"print(owned_tempdir({PREFIX!r}))")
    done = subprocess.run([sys.executable, "-c", code, str(Path(__file__).resolve().parents[2])],
                          capture_output=True, text=True, check=True)
    return Path(done.stdout.strip())


def test_a_dead_owners_folder_is_removed_and_a_live_ones_kept():
    mine = owned_tempdir(PREFIX)
    orphan = _folder_of_a_process_that_exits()
    (orphan / "trial").mkdir()
    (orphan / "trial" / "transcript.jsonl").write_text("{}\n")
    try:
        assert orphan.is_dir() and mine.is_dir()
        removed = remove_orphaned_tempdirs(PREFIX)
        assert orphan in removed and not orphan.exists()
        assert mine.is_dir(), "the running owner's folder was removed"
    finally:
        for folder in (mine, orphan):
            subprocess.run(["rm", "-rf", str(folder)], check=False)


def test_a_reused_pid_does_not_pass_for_the_owner():
    pid, start = process_identity(1).split()
    assert owner_alive(f"{pid} {start}")
    assert not owner_alive(f"{pid} {int(start) + 1}")
    assert not owner_alive("") and not owner_alive("garbage")
