"""The harness plug-in interface: what a third party implements to drive an agent in a trial.

A harness gets a `TrialContext` (an open sandbox holding the task, a model client, the
transcript, the budget and the rendered prompt), makes the agent write `kernel.py` in the
sandbox's workspace, and returns a `HarnessResult`. It does not score and does not open or close
the sandbox: `harnesses.trial.run_trial` does both, so every harness gets the same isolation and
the same judge. Harnesses are looked up by name in `harnesses.registry`; outside ones register
under the entry-point group ``kernelarena.harnesses``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ValidationError

from kernelarena.errors import ConfigError, first_problem

if TYPE_CHECKING:
    from harnesses.budget import Budget
    from harnesses.models.base import ModelClient
    from harnesses.transcript import Transcript
    from sandbox import Sandbox
    from sandbox.config import SandboxConfig
    from scorer.tasks.suites import Suite, Task

KERNEL_FILE = "kernel.py"
REFERENCE_FILE = "reference.py"
PROMPT_FILE = "PROMPT.md"


@dataclass
class TrialContext:
    trial_id: str
    suite: Suite
    task: Task
    model: ModelClient
    sandbox: Sandbox
    transcript: Transcript
    budget: Budget
    prompt: str
    device: str = "cpu"
    """The resolved target device ('cpu' or 'cuda') the kernel is scored on."""
    prompt_file: str = PROMPT_FILE
    """The prompt, also written into the workspace (relative to sandbox.workdir)."""
    options: dict[str, Any] = field(default_factory=dict)
    """Harness options from the trial spec (harness_options)."""
    out_dir: Path | None = None
    """The trial's result folder on the host, for files a harness keeps beside the transcript."""


@dataclass
class HarnessResult:
    exit_reason: str
    """'done', 'no_tool_calls', 'budget:<kind>' or 'error' (a harness may add its own)."""
    kernel_path: str = KERNEL_FILE
    """Where the kernel is in the sandbox, relative to its workdir."""
    detail: str = ""


class Harness(ABC):
    name: ClassVar[str]
    prompt_template: ClassVar[str] = "generic_v1"
    """The harnesses/prompts/ template run_trial renders into TrialContext.prompt; the default
    one tells the agent to use its own tools."""
    replayable: ClassVar[bool] = True
    """Whether a `replay:` model can drive it again from its transcript (`replay --reexec`);
    not so for a CLI that runs its own tools."""

    @classmethod
    def check_model(cls, model_id: str) -> None:
        """Raise ConfigError when this harness cannot drive `model_id` (checked before any
        sandbox starts, and by a sweep before its first trial). Default: any model."""
        return None

    def prompt_values(self) -> dict[str, Any]:
        """Extra `{{field}}` values this harness's prompt template needs (e.g. tool limits)."""
        return {}

    def agent_sandbox(self, cfg: SandboxConfig) -> AbstractAsyncContextManager[SandboxConfig]:
        """The agent sandbox's config as this harness needs it (an image with its CLI, a mount),
        entered before the sandbox opens and left after it closes. Default: unchanged."""
        return nullcontext(cfg)

    @abstractmethod
    async def run(self, ctx: TrialContext) -> HarnessResult:
        """Drive the agent until it is done or the budget ends it. A model or tool failure is an
        exit reason, not an exception; only a broken sandbox may raise (SandboxError)."""


ConfigT = TypeVar("ConfigT", bound=BaseModel)


def parse_options(config_cls: type[ConfigT], harness: str, options: dict[str, Any]) -> ConfigT:
    """A harness's pydantic config from its options; a bad one is a one-line ConfigError."""
    try:
        return config_cls(**options)
    except ValidationError as exc:
        field, msg = first_problem(exc, whole="options")
        raise ConfigError(
            f"bad option for harness '{harness}': {field}: {msg}; allowed: {', '.join(config_cls.model_fields)}"
        ) from None
