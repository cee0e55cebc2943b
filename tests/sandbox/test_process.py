"""The process backend on this host: the shared contract where the host lets it enforce
a limit, and its honesty (`info`) where it cannot."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox import Mount, SandboxConfig, SandboxError, open_sandbox
from tests.sandbox import contract
from tests.sandbox.conftest import small_config
from tests.shared.waiting import wait_until_async

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[2]


def cfg(**overrides) -> SandboxConfig:
    return small_config(backend="process", env={"EXPLICIT_VAR": "passed-in"}, **overrides)


def pids_with(arg: str) -> list[int]:
    """Host processes whose command line contains `arg`."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if arg.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


async def test_result_fields():
    async with open_sandbox(cfg()) as sb:
        await contract.check_result_fields(sb)


async def test_timeout_kills_and_sandbox_stays_usable():
    async with open_sandbox(cfg()) as sb:
        await contract.check_timeout_then_usable(sb)


async def test_process_that_left_its_group_is_killed_after_timeout():
    async with open_sandbox(cfg()) as sb:
        await contract.check_escaped_process_killed(sb)
    assert pids_with("sleep\x0077") == []


async def test_memory_hog_is_oom_killed_or_refused():
    async with open_sandbox(cfg(memory="256m")) as sb:
        if "cgroup" in sb.info.limits.get("memory", ""):
            await contract.check_oom(sb)
        else:
            # RLIMIT_AS: the allocation fails inside the process instead of an OOM kill.
            r = await sb.exec(["python3", "-c", contract.HOG], timeout=60)
            assert r.exit_code != 0 and "MemoryError" in r.stderr and not r.oom_killed


async def test_fork_bomb_contained_by_pids_limit():
    async with open_sandbox(cfg(pids=64)) as sb:
        if "pids" in sb.info.not_enforced:
            pytest.skip(f"pids limit not enforceable here: {sb.info.not_enforced['pids']}")
        await contract.check_fork_bomb(sb)
        # Every bomb was sent SIGKILL when the command ended; under load the last ones take a
        # moment to exit. A survivor (one the kill missed) keeps forking and is still there.
        await wait_until_async(lambda: not pids_with("bomb | bomb"), 5, "every bomb to exit", poll_s=0.05)


async def test_output_truncated_with_marker_and_full_count():
    async with open_sandbox(cfg(output_limit_bytes=10_000)) as sb:
        await contract.check_truncation(sb, 10_000)


async def test_file_round_trip_and_copy_out(tmp_path):
    async with open_sandbox(cfg()) as sb:
        await contract.check_files(sb, tmp_path)


async def test_file_calls_confined_to_workdir(tmp_path):
    outside = tmp_path / "host-file.txt"
    outside.write_text("host data")
    async with open_sandbox(cfg()) as sb:
        with pytest.raises(PermissionError):
            await sb.write_file("../escape.txt", "x")
        with pytest.raises(PermissionError):
            await sb.read_file(str(outside))
        # A link planted by the sandboxed code must not let the host write through it.
        assert (await sb.exec(["ln", "-s", str(outside), "innocent.txt"])).ok
        with pytest.raises(PermissionError):
            await sb.write_file("innocent.txt", "overwritten")
    assert outside.read_text() == "host data"


async def test_host_environment_does_not_leak(monkeypatch):
    async with open_sandbox(cfg()) as sb:
        await contract.check_env_scrubbed(sb, monkeypatch)
        r = await sb.exec("echo $HOME; echo CUDA=[$CUDA_VISIBLE_DEVICES]")
        assert r.stdout == f"{sb.workdir}\nCUDA=[]\n"  # gpus none hides the GPUs


async def test_scorer_torch_and_triton_work_inside():
    async with open_sandbox(cfg(memory="2g")) as sb:
        await contract.check_scorer_importable(sb)


async def test_network_isolation_is_real_or_declared(tcp_service):
    async with open_sandbox(cfg()) as sb:
        if not sb.info.network_isolated:
            assert "network" in sb.info.not_enforced  # said plainly, not pretended
            pytest.skip(sb.info.not_enforced["network"])
        await contract.check_network_blocked(sb, "127.0.0.1", tcp_service.port)
    async with open_sandbox(cfg(network=True)) as sb:
        assert not sb.info.network_isolated
        await contract.check_network_allowed(sb, "127.0.0.1", tcp_service.port)
    assert tcp_service.accepted == 1


async def test_info_states_what_is_not_enforced():
    async with open_sandbox(cfg()) as sb:
        info = sb.info.to_dict()
        assert info["backend"] == "process"
        assert "filesystem" in info["not_enforced"]
        for limit in ("pids", "memory"):
            assert (limit in info["limits"]) != (limit in info["not_enforced"]), info
        if os.geteuid() == 0:
            assert "user" in info["limits"] or "user" in info["not_enforced"]


async def test_close_removes_workdir_and_stray_processes():
    async with open_sandbox(cfg()) as sb:
        # Return only once the stray has left the command's session (it leads its own), or
        # the exec's own clean-up could catch it first and the test would prove nothing.
        r = await sb.exec(
            "setsid -f sleep 78 >/dev/null 2>&1; for i in $(seq 100); do "
            "p=$(pgrep -x -f 'sleep 78'); [ -n \"$p\" ] && [ \"$(ps -o sid= -p $p | tr -d ' ')\" = \"$p\" ] && break; "
            "sleep 0.05; done; echo started"
        )
        assert r.ok
        workdir = Path(sb.workdir)
        assert workdir.is_dir()
        assert pids_with("sleep\x0078")
    assert not workdir.exists()
    await wait_until_async(lambda: not pids_with("sleep\x0078"), 5, "the stray to be gone", poll_s=0.05)


async def test_cancelled_exec_kills_the_command():
    """Cancelled as soon as the command shows, which is often before asyncio has wired its pipes:
    the command's children hold those pipes, so a cancel that waited for them to close ended only
    when the command did (past this file's 120 s limit here)."""
    async with open_sandbox(cfg()) as sb:
        task = asyncio.create_task(sb.exec("sleep 179", timeout=170))
        await wait_until_async(lambda: pids_with("sleep\x00179"), 30, "the command to run")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert pids_with("sleep\x00179") == []
        assert (await sb.exec("echo ok")).ok


async def test_closed_sandbox_raises():
    async with open_sandbox(cfg()) as sb:
        pass
    with pytest.raises(SandboxError):
        await sb.exec("true")


async def test_mount_path_is_the_host_path(tmp_path):
    mount = Mount(host=tmp_path, target="/data")
    (tmp_path / "f.txt").write_text("seen")
    async with open_sandbox(cfg(mounts=[mount])) as sb:
        assert (await sb.exec(["cat", f"{sb.mount_path(mount)}/f.txt"])).stdout == "seen"


async def test_missing_mount_source_is_an_error(tmp_path):
    with pytest.raises(SandboxError, match="does not exist"):
        async with open_sandbox(cfg(mounts=[Mount(host=tmp_path / "nope", target="/x")])):
            pass


def test_cli_sigterm_kills_the_command(tmp_path):
    pidfile = tmp_path / "pid"
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator.cli", "sandbox", "run", "--backend", "process", "--shell", "--",
         f"sleep 81 & echo $! > {pidfile}; wait"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, text=True)
    try:
        deadline = time.monotonic() + 30
        while not (pidfile.exists() and pidfile.read_text().strip()):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        sleeper = int(pidfile.read_text())
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert not Path(f"/proc/{sleeper}").exists() or b"sleep" not in Path(f"/proc/{sleeper}/cmdline").read_bytes()


def test_cli_exit_code_and_output():
    proc = subprocess.run(
        [sys.executable, "-m", "orchestrator.cli", "sandbox", "run", "--backend", "process", "--",
         "sh", "-c", "echo hi; echo oops >&2; exit 5"],
        capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 5
    assert proc.stdout == "hi\n" and "oops" in proc.stderr


GPU_PROBE = "import torch; print(torch.cuda.is_available(), torch.cuda.device_count())"


@pytest.mark.gpu
async def test_gpus_follow_the_config():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU on this host")
    async with open_sandbox(cfg(gpus="all", memory="16g")) as sb:
        assert "memory" not in sb.info.limits or "cgroup" in sb.info.limits["memory"]  # no RLIMIT_AS with a GPU
        r = await sb.exec(["python3", "-c", GPU_PROBE], timeout=120)
        assert r.ok and r.stdout.split() == ["True", str(torch.cuda.device_count())], r
    async with open_sandbox(cfg(gpus=[0], memory="16g")) as sb:
        r = await sb.exec(["python3", "-c", GPU_PROBE], timeout=120)
        assert r.ok and r.stdout.split() == ["True", "1"], r
    async with open_sandbox(cfg(gpus="none", memory="16g")) as sb:
        r = await sb.exec(["python3", "-c", GPU_PROBE], timeout=120)
        assert r.ok and r.stdout.split() == ["False", "0"], r


async def test_workdir_of_a_sigkilled_owner_is_removed_by_the_next_sandbox(tmp_path):
    # A process opens a sandbox, starts a command there that leaves a detached writer behind
    # (setsid, its own session), reports its workdir and is SIGKILLed: its close never runs.
    script = (
        "import asyncio, sys\n"
        "from sandbox import SandboxConfig, open_sandbox\n"
        "async def main():\n"
        "    async with open_sandbox(SandboxConfig(backend='process')) as sb:\n"
        "        writer = 'while true; do mkdir -p \"$HOME/.cache/tmp\"; echo $$ > \"$HOME/.cache/tmp/pid\"; sleep 0.05; done'\n"
        "        started = 'until [ -s \"$HOME/.cache/tmp/pid\" ]; do sleep 0.01; done'\n"
        "        await sb.exec(['bash', '-c', f'setsid bash -c {writer!r} >/dev/null 2>&1 & {started}'], timeout=30)\n"
        "        print('WORKDIR=' + sb.workdir, flush=True)\n"
        "        await asyncio.sleep(600)\n"
        "asyncio.run(main())\n"
    )
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             cwd=str(Path(__file__).resolve().parents[2]))
    try:
        line = ""
        while not line.startswith("WORKDIR="):  # log lines may come first
            line = owner.stdout.readline()
            assert line, "the owner ended before it opened a sandbox"
        workdir = Path(line.strip().removeprefix("WORKDIR="))
        assert workdir.is_dir()
    finally:
        owner.kill()
        owner.wait()
    assert workdir.is_dir(), "left over by the killed owner"
    stray = int((workdir / ".cache/tmp/pid").read_text())
    assert Path(f"/proc/{stray}").exists(), "the detached writer outlived its owner"
    async with open_sandbox(cfg()) as sb:
        assert Path(sb.workdir).is_dir() and Path(sb.workdir) != workdir
        assert not workdir.exists()
    # The writer was ended with the workdir (and any mkdir of its still on its way out): nothing is
    # left that could bring the folder back.
    await wait_until_async(lambda: not _running(stray) and not pids_with(str(workdir)), 5, "the writer and its mkdirs to end")
    assert not workdir.exists()


def _running(pid: int) -> bool:
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid question arises only as root")
async def test_a_scoring_sandbox_keeps_root_for_the_scorers_wall():
    """uid 65534 would leave the scorer unable to give each kernel a uid of its own (and, where the
    host refuses unprivileged user namespaces, any namespace at all): a sweep on a GPU host scored
    every trial unwalled and refused them."""
    async with open_sandbox(cfg(nested_wall=True)) as sb:
        assert (await sb.exec("id -u")).stdout.strip() == "0"
        assert "walls each kernel worker" in sb.info.details["user"]
        assert "user" not in sb.info.limits and "user" not in sb.info.not_enforced


async def test_commands_see_the_hosts_python_path_after_the_code(tmp_path, monkeypatch):
    """Packages installed beside the interpreter in a folder of their own (pip --target, as on a
    device with no registry) are the Python the scorer in a sandbox needs too."""
    extra = tmp_path / "site"
    extra.mkdir()
    extra.chmod(0o755)
    tmp_path.chmod(0o755)
    (extra / "ka_extra_pkg.py").write_text("VALUE = 41 + 1\n")
    (extra / "ka_extra_pkg.py").chmod(0o644)
    monkeypatch.setenv("PYTHONPATH", str(extra))
    async with open_sandbox(cfg()) as sb:
        probe = f"import ka_extra_pkg, sys; print(ka_extra_pkg.VALUE, sys.path.index({str(extra)!r}) > 0)"
        r = await sb.exec(["python3", "-c", probe])
        assert r.stdout.strip() == "42 True", r.stderr
