"""tests/conftest.py: with the sandbox images building beside the test run (scripts/ci_checks.sh), a
test marked `docker` starts only once the build has ended, and that wait is not counted in the
test's own time limit; other tests do not wait."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SAMPLE = '''
import os
import pytest

STATUS = os.environ["KA_IMAGES_STATUS"]

def test_unmarked_runs_before_the_build_ends():
    assert not os.path.exists(STATUS)
    open(os.environ["STARTED"], "w").close()

@pytest.mark.docker
@pytest.mark.timeout(1)
def test_docker_waits_for_the_build():
    assert os.path.exists(STATUS)
'''


def test_a_docker_test_waits_for_the_build_outside_its_time_limit(tmp_path: Path) -> None:
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    status, started = tmp_path / "status", tmp_path / "started"
    # The build "ends" 2 s after the unmarked test ran: longer than the docker test's 1 s limit.
    builder = subprocess.Popen(["bash", "-c", f"until [ -e {started} ]; do sleep 0.05; done; sleep 2; "
                                f"echo 0 > {status}.part && mv {status}.part {status}"])
    env = {**os.environ, "PYTHONPATH": str(REPO), "KA_IMAGES_STATUS": str(status), "STARTED": str(started)}
    try:
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
                              "-p", "no:xdist", str(tmp_path / "test_sample.py")],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    finally:
        builder.kill()
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout
