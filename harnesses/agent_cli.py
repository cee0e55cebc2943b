"""Harnesses `claude-code` and `codex`: a real agent CLI in the trial's container, every model
call through our proxy.

The agent sandbox is the usual locked-down container (`--network none`), made from the agents
image (`kernelarena sandbox build-image --with claude-code,codex`) and given one extra mount: a
host folder holding the model proxy's unix socket. Inside, `harnesses/proxy/forwarder.py` puts
that socket on 127.0.0.1:PORT and the CLI's base URL points there; its API key is a random
per-trial token the proxy checks, and the proxy adds the real key upstream. So the container's
only route is the proxy, and the budget, the retry policy and the transcript apply to the CLI as
they do to `minimal` (see harnesses/proxy/server.py).

A spent budget (or a provider that keeps failing) sets the proxy's `exit`: the CLI's process
group is killed and the kernel it left is scored. The CLI's stdout stream becomes transcript
events as it arrives (harnesses/cli_streams.py); its own session log is copied to
``cli_session/`` beside the transcript.
"""

from __future__ import annotations

import asyncio
import secrets
import shlex
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from harnesses.base import Harness, HarnessResult, TrialContext, parse_options
from harnesses.cli_streams import ClaudeStream, CodexStream, StreamRecorder
from harnesses.exits import BudgetExhausted
from harnesses.models import parse_model_id
from harnesses.models.base import ModelOptions
from harnesses.models.credentials import check_key
from harnesses.proxy.server import ModelProxy
from kernelarena.errors import ConfigError
from sandbox.base import Sandbox, SandboxError
from sandbox.config import Mount, SandboxConfig
from sandbox.image import AGENTS_TAG, DEFAULT_TAG
from sandbox.open import resolve_backend

#: Where the proxy's socket folder is mounted in the container.
PROXY_DIR = "/run/kernelarena-proxy"
SOCKET_NAME = "proxy.sock"
#: The agent's own files (forwarder, pid file, the CLI's home) live here, in the container's /tmp.
AGENT_DIR = "/tmp/kernelarena-agent"
AGENT_HOME = f"{AGENT_DIR}/home"
CODEX_HOME = f"{AGENT_HOME}/.codex"
SESSION_DIR = "cli_session"
UPSTREAMS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
FORWARDER = Path(__file__).resolve().parent / "proxy" / "forwarder.py"


async def start_forwarder(sandbox: Sandbox, port: int) -> None:
    """Start forwarder.py in the sandbox (detached, so it outlives this command) and wait until
    it listens on 127.0.0.1:`port`."""
    await sandbox.write_file(f"{AGENT_DIR}/forwarder.py", FORWARDER.read_bytes())
    script = (
        f"mkdir -p {AGENT_HOME} && cd {AGENT_DIR} && "
        f"(setsid nohup python3 -u forwarder.py {PROXY_DIR}/{SOCKET_NAME} {port} >forwarder.log 2>&1 </dev/null &) && "
        "for i in $(seq 100); do grep -q ready forwarder.log 2>/dev/null && exit 0; sleep 0.05; done; "
        "cat forwarder.log; exit 1"
    )
    started = await sandbox.exec(script, timeout=30)
    if started.exit_code != 0:
        raise SandboxError(
            f"the model proxy's forwarder did not start in the sandbox: {started.stdout[-500:]}{started.stderr[-500:]}"
        )


class AgentCLIConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    image: str = AGENTS_TAG
    """Image of the agent sandbox when the trial's sandbox names the default one."""
    extra_args: list[str] = []
    """More arguments for the CLI (after ours)."""
    port: int = Field(default=8787, ge=1024, le=65535)
    """Loopback port of the forwarder inside the container."""
    stop_grace_s: float = Field(default=3.0, ge=0)
    """After a cut-off, SIGTERM to the CLI, then SIGKILL after this long."""
    max_event_chars: int = Field(default=20_000, ge=200)
    """Longest text one transcript event holds; longer output is cut in the middle and marked."""


class AgentCLIHarness(Harness):
    """What both CLIs share; a subclass names its provider, command, environment and stream."""

    provider: ClassVar[str]
    replayable = False
    base_path: ClassVar[str] = ""
    """Path prefix of the CLI's base URL, removed before the proxy appends the rest upstream."""
    session_subdir: ClassVar[str]
    """The CLI's session logs, relative to its home."""

    def __init__(self, **options: Any) -> None:
        self.config = parse_options(AgentCLIConfig, self.name, options)
        self._socket_dir: Path | None = None

    @classmethod
    def check_model(cls, model_id: str) -> None:
        if parse_model_id(model_id)[0] != cls.provider:
            raise ConfigError(f"harness '{cls.name}' speaks the {cls.provider} API; give it a model "
                              f"'{cls.provider}:NAME' (got {model_id})")

    # -- what a CLI supplies -------------------------------------------------------------------
    def command(self, ctx: TrialContext, model_name: str) -> list[str]:
        raise NotImplementedError

    def environment(self, base_url: str, token: str) -> dict[str, str]:
        raise NotImplementedError

    def stream(self, ctx: TrialContext) -> StreamRecorder:
        raise NotImplementedError

    async def prepare_home(self, ctx: TrialContext, base_url: str, model_name: str) -> None:
        """Write the CLI's config files under AGENT_HOME, where needed."""

    # -- the sandbox: agents image, proxy socket mounted, no network ---------------------------
    @asynccontextmanager
    async def agent_sandbox(self, cfg: SandboxConfig) -> AsyncIterator[SandboxConfig]:
        if resolve_backend(cfg.backend) != "docker":
            raise ConfigError(f"harness '{self.name}' runs its CLI in a container: use the docker backend "
                              "(start a daemon with scripts/docker_up.sh)")
        if cfg.network:
            raise ConfigError(f"harness '{self.name}' gives the container one route, the model proxy: "
                              "set the sandbox's network = false")
        folder = Path(tempfile.mkdtemp(prefix="ka-proxy-"))
        folder.chmod(0o755)  # the container's unprivileged user must reach the socket
        self._socket_dir = folder
        image = self.config.image if cfg.image == DEFAULT_TAG else cfg.image
        try:
            yield cfg.model_copy(update={"image": image, "mounts": [*cfg.mounts, Mount(host=folder, target=PROXY_DIR)]})
        finally:
            self._socket_dir = None
            shutil.rmtree(folder, ignore_errors=True)

    # -- the run -------------------------------------------------------------------------------
    async def run(self, ctx: TrialContext) -> HarnessResult:
        ctx.budget.start()
        self.check_model(ctx.model.model_id)
        provider, model_name = parse_model_id(ctx.model.model_id)
        if self._socket_dir is None:
            raise ConfigError(f"harness '{self.name}' must run through harnesses.trial.run_trial")
        options = getattr(ctx.model, "options", None) or ModelOptions()
        token = f"ka-trial-{secrets.token_hex(16)}"
        ctx.transcript.redactor.add([token])
        proxy = ModelProxy(
            socket_path=self._socket_dir / SOCKET_NAME, upstream=options.base_url or UPSTREAMS[provider],
            provider=provider, api_key=check_key(provider, model_name, options.api_key_env) or "", token=token,
            budget=ctx.budget, transcript=ctx.transcript, options=options, strip_prefix=self.base_path,
        )
        base_url = f"http://127.0.0.1:{self.config.port}{self.base_path}"
        async with proxy:
            await start_forwarder(ctx.sandbox, self.config.port)
            await self.prepare_home(ctx, base_url, model_name)
            result = await self._run_cli(ctx, proxy, model_name, base_url, token)
        await self._keep_session_log(ctx)
        return result

    async def _run_cli(self, ctx: TrialContext, proxy: ModelProxy, model_name: str, base_url: str, token: str) -> HarnessResult:
        argv = [*self.command(ctx, model_name), *self.config.extra_args]
        # The CLI's process group id is written first, so a cut-off can kill the CLI and its tools.
        script = (f"ps -o pgid= -p $$ | tr -d ' ' >{AGENT_DIR}/cli.pgid; "
                  f"cd {shlex.quote(ctx.sandbox.workdir)} && exec {shlex.join(argv)}")
        env = {"HOME": AGENT_HOME, **self.environment(base_url, token)}
        # The prompt is in the workspace's PROMPT.md (and its template's hash in trial_start).
        shown = ["{prompt}" if arg == ctx.prompt else arg for arg in argv]
        ctx.transcript.event("harness_event", kind="cli_start", command=shown, base_url=base_url)
        recorder = self.stream(ctx)
        remaining = ctx.budget.remaining_s()
        cli = asyncio.ensure_future(ctx.sandbox.exec(
            script, timeout=remaining if remaining is not None else 24 * 3600, env=env, on_stdout=recorder.feed))
        cut = asyncio.ensure_future(proxy.cut_off.wait())
        try:
            await asyncio.wait({cli, cut}, return_when=asyncio.FIRST_COMPLETED)
            if not cli.done():
                await self._stop_cli(ctx)
            result = await cli
        finally:
            cut.cancel()
            if not cli.done():
                cli.cancel()
        recorder.close()
        ctx.transcript.event(
            "harness_event", kind="cli_exit", exit_code=result.exit_code, ended_by=result.ended_by,
            duration_s=round(result.duration_s, 3), stdout_lines=recorder.lines,
            stderr=result.stderr[-self.config.max_event_chars:] if result.stderr.strip() else "",
        )
        if proxy.exit is not None:
            return HarnessResult(exit_reason=proxy.exit.exit_reason, detail=proxy.exit.detail)
        if result.timed_out:
            exhausted = BudgetExhausted("wall_time", ctx.budget.config.wall_time_s or 0, round(ctx.budget.elapsed_s, 3))
            ctx.transcript.event("budget", kind=exhausted.kind, limit=exhausted.limit, used=exhausted.used)
            return HarnessResult(exit_reason=exhausted.exit_reason, detail=exhausted.detail)
        if result.exit_code != 0:
            return HarnessResult(exit_reason="error", detail=f"the CLI exited {result.exit_code} ({result.ended_by})")
        return HarnessResult(exit_reason="done")

    async def _stop_cli(self, ctx: TrialContext) -> None:
        pgid = f"$(cat {AGENT_DIR}/cli.pgid)"
        await ctx.sandbox.exec(
            f"kill -TERM -- -{pgid} 2>/dev/null; for i in $(seq {max(1, int(self.config.stop_grace_s * 10))}); do "
            f"kill -0 -- -{pgid} 2>/dev/null || exit 0; sleep 0.1; done; kill -KILL -- -{pgid} 2>/dev/null; true",
            timeout=self.config.stop_grace_s + 10,
        )
        ctx.transcript.event("harness_event", kind="cli_cut_off")

    async def _keep_session_log(self, ctx: TrialContext) -> None:
        if ctx.out_dir is None:
            return
        source = f"{AGENT_HOME}/{self.session_subdir}"
        try:
            await ctx.sandbox.copy_out(source, ctx.out_dir / SESSION_DIR)
        except FileNotFoundError:
            ctx.transcript.event("harness_event", kind="cli_session_missing", path=source)
            return
        except OSError as exc:
            # The CLI's own log is for audit; the trial's kernel and transcript do not depend on it.
            ctx.transcript.event("harness_event", kind="cli_session_lost", path=source, error=str(exc)[:500])
            return
        files = sorted(p.relative_to(ctx.out_dir).as_posix() for p in (ctx.out_dir / SESSION_DIR).rglob("*") if p.is_file())
        ctx.transcript.event("harness_event", kind="cli_session_kept", files=files)


class ClaudeCodeHarness(AgentCLIHarness):
    name = "claude-code"
    provider = "anthropic"
    session_subdir = ".claude/projects"

    def command(self, ctx: TrialContext, model_name: str) -> list[str]:
        return ["claude", "-p", ctx.prompt, "--model", model_name, "--output-format", "stream-json", "--verbose",
                "--dangerously-skip-permissions"]

    def environment(self, base_url: str, token: str) -> dict[str, str]:
        return {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": token}

    def stream(self, ctx: TrialContext) -> StreamRecorder:
        return ClaudeStream(ctx.transcript, self.config.max_event_chars)


class CodexHarness(AgentCLIHarness):
    name = "codex"
    provider = "openai"
    base_path = "/v1"
    session_subdir = ".codex/sessions"

    def command(self, ctx: TrialContext, model_name: str) -> list[str]:
        return ["codex", "exec", "--json", "--model", model_name, "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox", ctx.prompt]

    def environment(self, base_url: str, token: str) -> dict[str, str]:
        return {"OPENAI_API_KEY": token, "CODEX_HOME": CODEX_HOME}

    async def prepare_home(self, ctx: TrialContext, base_url: str, model_name: str) -> None:
        # Codex reads its base URL from a model provider in config.toml (OPENAI_BASE_URL is not
        # honoured by the built-in provider, which would also try WebSockets first).
        config = (
            'model_provider = "kernelarena"\n\n[model_providers.kernelarena]\n'
            'name = "KernelArena model proxy"\n'
            f'base_url = "{base_url}"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
        )
        await ctx.sandbox.write_file(f"{CODEX_HOME}/config.toml", config)

    def stream(self, ctx: TrialContext) -> StreamRecorder:
        return CodexStream(ctx.transcript, self.config.max_event_chars)
