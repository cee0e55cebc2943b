"""Per-trial execution environments: a locked-down Docker container per sandbox (GPU
passthrough included), or a resource-limited subprocess where no daemon runs.

    async with open_sandbox(SandboxConfig(gpus="all")) as sb:
        result = await sb.exec("python -m scorer --help", timeout=60)

A failed command is an ExecResult; a broken sandbox raises SandboxError. See docs/SANDBOX.md.
"""

from sandbox.base import ExecResult, Sandbox, SandboxError, SandboxInfo, SandboxSetupError
from sandbox.config import Mount, SandboxConfig
from sandbox.open import BACKENDS, create_sandbox, open_sandbox, prune_leaked, resolve_backend

__all__ = [
    "BACKENDS",
    "ExecResult",
    "Mount",
    "Sandbox",
    "SandboxConfig",
    "SandboxError",
    "SandboxInfo",
    "SandboxSetupError",
    "create_sandbox",
    "open_sandbox",
    "prune_leaked",
    "resolve_backend",
]
