"""scripts/pytest_failure_log.py: the GPU check's pytest part records each failure as it happens, so
a part the device call's budget kills still leaves why its tests failed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_each_failure_is_on_disk_before_pytest_ends(tmp_path: Path) -> None:
    (tmp_path / "test_sample.py").write_text(
        "import os, time\n"
        "def test_passes():\n    pass\n"
        "def test_fails():\n    assert 1 == 2, 'the reason'\n"
        "def test_waits_for_the_kill():\n"
        "    open(os.environ['READY'], 'w').close()\n    time.sleep(60)\n")
    log, ready = tmp_path / "failures.txt", tmp_path / "ready"
    env = {**os.environ, "PYTHONPATH": str(REPO), "KA_PYTEST_FAILURES": str(log), "READY": str(ready)}
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                             "scripts.pytest_failure_log", str(tmp_path / "test_sample.py")],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        for _ in range(600):
            if ready.exists():
                break
            try:
                proc.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                pass
        assert ready.exists(), "the sample never reached its last test"
        proc.kill()  # as the GPU check's budget does: pytest never prints its summary
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    record = log.read_text()
    assert "== test_sample.py::test_fails (call)" in record and "the reason" in record
    assert "test_passes" not in record
