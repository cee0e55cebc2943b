"""Scoring sandboxes on a GPU share one lock folder with the host, so the scorer's per-GPU
timing lock separates concurrent trials (each sandbox has its own /tmp otherwise)."""

import fcntl
import subprocess
import sys

from harnesses.trial import GPU_LOCK_TARGET, _sandbox_config
from sandbox.config import SandboxConfig
from scorer.gpu.lock import LOCK_DIR_ENV, lock_path


def test_gpu_scoring_sandbox_mounts_the_shared_lock_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    cfg = _sandbox_config(SandboxConfig(backend="docker"), "cuda", "demo/swish/m/0", "scorer")
    mount = next(m for m in cfg.mounts if m.target == GPU_LOCK_TARGET)
    assert mount.host == tmp_path / "locks" and not mount.read_only
    assert cfg.env[LOCK_DIR_ENV] == GPU_LOCK_TARGET
    assert (tmp_path / "locks").stat().st_mode & 0o1777 == 0o1777

    proc_cfg = _sandbox_config(SandboxConfig(backend="process"), "cuda", "t", "scorer")
    assert proc_cfg.env[LOCK_DIR_ENV] == str(tmp_path / "locks")


def test_cpu_scoring_gets_the_lock_folder_and_agent_sandboxes_do_not(tmp_path, monkeypatch):
    # A CPU scoring times on the host's cores: its judge takes the same locks and asks the same
    # freeze servers (scorer/gpu/freeze.py) as on a GPU; an agent never sees the folder.
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    scoring = _sandbox_config(SandboxConfig(backend="process"), "cpu", "t", "scorer")
    assert [m.target for m in scoring.mounts] == [GPU_LOCK_TARGET] and scoring.nested_wall
    agent = _sandbox_config(SandboxConfig(backend="process"), "cuda", "t", "agent")
    assert not agent.mounts and not agent.nested_wall


def test_lock_in_the_shared_dir_excludes_another_process(tmp_path, monkeypatch):
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path))
    path = lock_path("GPU-1234")
    with open(path, "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        probe = (
            "import fcntl,sys; fh=open(sys.argv[1],'a+');\n"
            "try: fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB); print('free')\n"
            "except BlockingIOError: print('held')"
        )
        out = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True)
    assert out.stdout.strip() == "held"
