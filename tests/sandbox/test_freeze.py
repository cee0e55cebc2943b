"""Exclusive timing (scorer/gpu/freeze.py) on real sandboxes: a registered agent sandbox is frozen
while a real judge times on its device and thawed after; a judge killed mid-freeze, or one that
outlives its lease, leaves nothing frozen; frozen time is not the agent's budget."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from harnesses.budget import Budget, BudgetConfig
from sandbox import SandboxConfig, open_sandbox
from scorer.gpu import freeze
from scorer.gpu.lock import LOCK_DIR_ENV
from scorer.options import ScoreOptions
from scorer.tasks.suites import load_suite
from tests.shared.waiting import wait_until, wait_until_async

pytestmark = pytest.mark.timeout(300)
REPO = Path(__file__).resolve().parents[2]
# Writes the monotonic clock every 5 ms: a frozen sandbox leaves a gap in it.
TICKER = "import time\nwhile True:\n    print(time.monotonic(), flush=True)\n    time.sleep(0.005)\n"


@pytest.fixture
def lock_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    return tmp_path / "locks"


def _freezer_or_skip(sb: Any) -> Path:
    """`sb` is a process or docker sandbox: the base class has no freezer."""
    cgroup: Path | None = sb.freezer_cgroup()
    if cgroup is None:
        pytest.skip(f"no freezer cgroup for this sandbox: {sb.info.not_enforced.get('freeze')}")
    return cgroup


def _ticks(text: str) -> list[float]:
    return [float(v) for v in text.split() if v.replace(".", "", 1).isdigit()]


def _intervals(log: Path) -> list[tuple[float, float]]:
    out, start = [], None
    for line in log.read_text().splitlines():
        kind, _, t = line.partition(" ")
        if kind == "F":
            start = float(t)
        elif kind == "T" and start is not None:
            out.append((start, float(t)))
            start = None
    return out


@asynccontextmanager
async def ticking_agent(backend: str, lock_dir: Path, name: str) -> AsyncIterator[tuple[Any, freeze.Registration]]:
    """An agent sandbox registered for the CPU with a freeze server, writing ticks.txt."""
    async with open_sandbox(SandboxConfig(backend=backend)) as sb:
        cgroup = _freezer_or_skip(sb)
        with freeze.FreezeServer(lock_dir) as server:
            reg = server.register(name, cgroup, [freeze.CPU_DEVICE])
            await sb.write_file("tick.py", TICKER)
            ticker = asyncio.create_task(sb.exec("python3 tick.py > ticks.txt", timeout=240))
            await _ticks_after(sb, 0.0)
            try:
                yield sb, reg
            finally:
                ticker.cancel()
                server.unregister(reg)


async def _ticks_after(sb: Any, moment: float) -> list[float]:
    """The ticks, once the agent has ticked after `moment` (it runs)."""
    async def read() -> list[float]:
        try:
            ticks = _ticks((await sb.read_file("ticks.txt")).decode())
        except FileNotFoundError:
            return []
        return ticks if ticks and ticks[-1] > moment else []

    return await wait_until_async(read, 30, f"the agent to tick after {moment:.3f}", poll_s=0.05)


def test_judge_freezes_registered_process_sandbox_while_timing(lock_dir: Path) -> None:
    """A real CPU scoring: the ticker in the agent sandbox stops for the timed stages only."""
    from scorer.judge.scoring import score_kernel

    async def main() -> tuple[object, list[float], list[tuple[float, float]], float]:
        async with ticking_agent("process", lock_dir, "agent-1") as (sb, reg):
            suite = load_suite("demo")
            score = await asyncio.to_thread(
                score_kernel, suite, "swish", suite.root / "solutions" / "swish" / "kernel.py",
                device="cpu", options=ScoreOptions(repetitions=5, warmup=1, seeds=2))
            assert not freeze.is_frozen(reg.cgroup), "thawed once the scoring ended"
            intervals = _intervals(reg.log)
            ticks = await _ticks_after(sb, max((end for _, end in intervals), default=0.0))  # it runs again
            return score, ticks, intervals, reg.frozen_s()

    score, ticks, intervals, frozen = asyncio.run(main())
    assert score.verdict == "passed", score.error  # type: ignore[attr-defined]
    # baseline timing, kernel timing, the baseline's and the kernel's judge-clocked batches
    assert len(intervals) >= 4 and frozen > 0
    assert score.contention["frozen"]["sandboxes"] >= 2  # type: ignore[attr-defined]
    for start, end in intervals:
        inside = [t for t in ticks if start + 0.05 < t < end - 0.01]
        assert not inside, f"the agent ran {len(inside)} ticks while frozen ({start:.3f}-{end:.3f})"
    assert ticks[-1] > intervals[-1][1], "the agent runs again after the timing"


def _judge(lock_dir: Path, lease_s: float) -> subprocess.Popen[str]:
    code = ("import sys, time\nfrom scorer.gpu import freeze\n"
            f"with freeze.exclusive({str(lock_dir)!r}, 'cpu', lease_s={lease_s}) as r:\n"
            "    print(len(r.frozen), flush=True)\n    time.sleep(120)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)


def _wait_thawed(cgroup: Path, within_s: float) -> float:
    t0 = time.monotonic()
    wait_until(lambda: not freeze.is_frozen(cgroup), within_s, "the thaw")
    return time.monotonic() - t0


def test_judge_killed_mid_freeze_thaws_at_once(lock_dir: Path) -> None:
    async def main() -> None:
        async with ticking_agent("process", lock_dir, "agent-k") as (sb, reg):
            judge = _judge(lock_dir, lease_s=300)
            try:
                assert judge.stdout is not None and judge.stdout.readline().strip() == "1"
                assert freeze.is_frozen(reg.cgroup)
                assert list((lock_dir / freeze.LEASES).glob("*.json")), "a lease while frozen"
                judge.send_signal(signal.SIGKILL)
                killed = time.monotonic()
                assert _wait_thawed(reg.cgroup, within_s=2.0) < 2.0
                # The thaw comes first and the lease goes right after it: both within the bound.
                wait_until(lambda: not list((lock_dir / freeze.LEASES).glob("*.json")),
                           killed + 2.0 - time.monotonic(), "the lease to go within 2 s of the judge")
            finally:
                judge.kill()
                judge.wait()
            await _ticks_after(sb, killed)  # the agent runs again

    asyncio.run(main())


def test_lease_deadline_thaws_a_judge_that_never_lets_go(lock_dir: Path) -> None:
    async def main() -> None:
        async with ticking_agent("process", lock_dir, "agent-l") as (_, reg):
            judge = _judge(lock_dir, lease_s=1.0)
            try:
                assert judge.stdout is not None and judge.stdout.readline().strip() == "1"
                t0 = time.monotonic()
                assert freeze.is_frozen(reg.cgroup)
                _wait_thawed(reg.cgroup, within_s=3.0)
                assert 0.8 < time.monotonic() - t0 < 3.0
                assert judge.poll() is None, "thawed while the judge still holds its connection"
            finally:
                judge.kill()
                judge.wait()
            assert 0.8 < reg.frozen_s() < 3.0

    asyncio.run(main())


def test_frozen_time_is_not_the_agents_wall_time(lock_dir: Path) -> None:
    """The same agent command with and without a 1.5 s freeze in its middle: the wall clock grows
    by the freeze, the budget's wall time does not."""

    async def run(freeze_s: float) -> tuple[float, float, float]:
        async with open_sandbox(SandboxConfig(backend="process")) as sb:
            cgroup = _freezer_or_skip(sb)
            with freeze.FreezeServer(lock_dir) as server:
                reg = server.register("agent-b", cgroup, [freeze.CPU_DEVICE])
                budget = Budget(BudgetConfig(wall_time_s=60))
                budget.exclude_paused(reg.frozen_s)
                budget.start()
                t0 = time.monotonic()
                work = asyncio.create_task(sb.exec("touch started; for i in $(seq 40); do sleep 0.05; done", timeout=60))
                if freeze_s:  # while the command runs
                    await wait_until_async((Path(sb.workdir) / "started").exists, 30, "the command to start")
                    with freeze.exclusive(lock_dir, freeze.CPU_DEVICE):
                        await asyncio.sleep(freeze_s)
                result = await work
                budget.stop()
                wall = time.monotonic() - t0
                assert result.ok
                server.unregister(reg)
                return wall, budget.elapsed_s, budget.paused_s

    quiet_wall, quiet_budget, quiet_paused = asyncio.run(run(0.0))
    busy_wall, busy_budget, busy_paused = asyncio.run(run(1.5))
    assert quiet_paused == 0.0
    assert 1.4 < busy_paused < 2.0
    assert busy_wall > quiet_wall + 1.0, "the freeze stopped the agent's command"
    assert busy_budget == pytest.approx(busy_wall - busy_paused, abs=0.05)
    assert abs(busy_budget - quiet_budget) < 1.0, (quiet_budget, busy_budget)


@pytest.mark.docker
@pytest.mark.usefixtures("docker_ready")
def test_docker_agent_container_is_frozen_and_thawed(lock_dir: Path) -> None:
    async def main() -> None:
        async with ticking_agent("docker", lock_dir, "agent-d") as (sb, reg):
            with freeze.exclusive(lock_dir, freeze.CPU_DEVICE) as report:
                assert report.frozen == ["agent-d"] and freeze.is_frozen(reg.cgroup)
                start = time.monotonic()
                await asyncio.sleep(1.0)
                end = time.monotonic()
            assert not freeze.is_frozen(reg.cgroup)
            ticks = await _ticks_after(sb, end)
        # The container shares the host's monotonic clock (no time namespace).
        assert not [t for t in ticks if start + 0.02 < t < end - 0.02]
        assert ticks[-1] > end

    asyncio.run(main())


def test_trial_end_thaws_a_frozen_agent_and_leaves_no_files(lock_dir: Path) -> None:
    """The orchestrator unregisters an agent (its trial ended) while a judge still times: it is
    thawed at once, and the judge's later thaw leaves nothing behind in the registry."""

    async def main() -> None:
        async with open_sandbox(SandboxConfig(backend="process")) as sb:
            cgroup = _freezer_or_skip(sb)
            with freeze.FreezeServer(lock_dir) as server:
                reg = server.register("agent-u", cgroup, [freeze.CPU_DEVICE])
                other = server.register("agent-gpu", cgroup.parent, ["GPU-other"])  # another device: untouched
                with freeze.exclusive(lock_dir, freeze.CPU_DEVICE) as report:
                    assert report.frozen == ["agent-u"] and freeze.is_frozen(cgroup)
                    frozen_s = server.unregister(reg)
                    assert not freeze.is_frozen(cgroup) and frozen_s > 0
                server.unregister(other)
                assert not list((lock_dir / freeze.AGENTS).iterdir())

    asyncio.run(main())


@pytest.mark.docker
@pytest.mark.usefixtures("docker_ready")
def test_commands_into_a_frozen_docker_agent_wait_for_the_thaw(lock_dir: Path) -> None:
    """runc refuses an exec into a frozen container (exit 126, nothing run): a sweep read an agent's
    kernel.py while another judge timed on its device and failed the trial. Commands and file reads
    now wait for the thaw."""
    async def main() -> None:
        async with ticking_agent("docker", lock_dir, "agent-f") as (sb, reg):
            await sb.write_file("kernel.py", "x = 1\n")
            with freeze.exclusive(lock_dir, freeze.CPU_DEVICE) as report:
                assert report.frozen == ["agent-f"] and freeze.is_frozen(reg.cgroup)
                started = time.monotonic()
                command = asyncio.ensure_future(sb.exec(["echo", "after the thaw"], timeout=30))
                read = asyncio.ensure_future(sb.read_file("kernel.py"))
                await asyncio.sleep(1.0)
                assert not command.done() and not read.done()
            result, data = await command, await read
            assert result.exit_code == 0 and result.stdout.strip() == "after the thaw", result
            assert data == b"x = 1\n" and time.monotonic() - started >= 1.0

    asyncio.run(main())


def test_only_runcs_refusal_of_a_frozen_container_is_waited_on() -> None:
    """What a docker exec's exit 126 means: runc's refusal while frozen (nothing started, its
    message or none), against a command that ran and exited 126, or a refusal for another cause."""
    from sandbox.docker_sandbox import _refused_while_frozen

    paused = "OCI runtime exec failed: exec failed: cannot exec in a paused container: unknown"
    assert _refused_while_frozen(126, 0, paused)
    assert _refused_while_frozen(126, 0, ""), "the message lost on the stream"
    assert not _refused_while_frozen(126, 4242, ""), "a command that ran and exited 126"
    assert not _refused_while_frozen(126, 0, "fork/exec: resource temporarily unavailable")
    assert not _refused_while_frozen(1, 0, paused)


@pytest.mark.docker
@pytest.mark.usefixtures("docker_ready")
def test_a_command_that_exits_126_in_a_thawed_container_is_not_retried() -> None:
    async def main() -> None:
        async with open_sandbox(SandboxConfig(backend="docker")) as sb:
            await sb.write_file("count.sh", "echo run >> runs.txt\nexit 126\n")
            started = time.monotonic()
            result = await sb.exec("sh count.sh", timeout=30)
            assert result.exit_code == 126 and time.monotonic() - started < 10
            assert (await sb.read_file("runs.txt")).decode().split() == ["run"]

    asyncio.run(main())
