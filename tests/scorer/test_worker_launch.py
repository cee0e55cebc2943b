"""How the judge's interpreters start and how their ends read (scorer/workers/forkserver.py,
process.py): no working directory on sys.path (`-P`), so a `scorer` package planted where the
judge runs is never imported; and a worker whose fork server was killed reads as what it is,
not as "kernel exited the process with code 1". CPU, real processes."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from scorer.workers import forkserver
from scorer.workers.process import WorkerDirs, WorkerFailure, WorkerProcess
from tests.scorer.test_forkserver import fresh_server  # noqa: F401  (the fixture: a server of the test's own)


def _plant(cwd: Path) -> Path:
    """A `scorer` package in the judge's working directory, as a kernel under its uid could write."""
    marker = cwd.parent / "planted-code-ran"
    (cwd / "scorer").mkdir(parents=True)
    (cwd / "scorer" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    return marker


@pytest.mark.parametrize("forked", [True, False], ids=["fork-server", "exec"])
def test_a_scorer_package_planted_in_the_judges_cwd_is_never_imported(tmp_path: Path, fresh_server: None,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      forked: bool) -> None:
    cwd = tmp_path / "judge-cwd"
    marker = _plant(cwd)
    monkeypatch.chdir(cwd)
    if not forked:
        monkeypatch.setenv(forkserver.ENV_SWITCH, "0")
    worker = WorkerProcess("reference", WorkerDirs.create(tmp_path / "w", "reference"))
    worker.start()
    try:
        assert worker.wait_started(120), worker.log_tail()
        assert isinstance(worker.proc, forkserver.ForkedProcess) == forked
    finally:
        worker.close()
    assert not marker.exists(), "an interpreter of the scorer imported the planted package"


def test_a_worker_whose_fork_server_was_killed_does_not_read_as_exit_code_1(tmp_path: Path,
                                                                            fresh_server: None) -> None:
    worker = WorkerProcess("kernel", WorkerDirs.create(tmp_path / "k", "kernel"))
    worker.start()
    try:
        assert worker.wait_started(120), worker.log_tail()
        server = forkserver._SERVER
        assert isinstance(worker.proc, forkserver.ForkedProcess) and server is not None
        server.proc.kill()  # what a kernel under the same uid could do
        server.proc.wait()
        os.killpg(worker.proc.pid, signal.SIGKILL)  # the worker (and, behind its wall, the kernel) dies after its server
        with pytest.raises(WorkerFailure) as failure:
            worker.request({"op": "ping"}, None, 30)
    finally:
        worker.close()
    assert "exited the process with code" not in failure.value.message
    assert "fork server" in failure.value.message and "lost" in failure.value.message
