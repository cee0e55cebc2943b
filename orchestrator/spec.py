"""The sweep spec: what to run (models x suites x tasks x samples), how, and where to write it.

A spec is a TOML file parsed into `SweepSpec`. Every section forbids unknown keys so a typo is a
one-line error instead of a silently ignored setting. The validated spec is frozen into the sweep
folder (`spec.frozen.json`) so a resumed sweep runs exactly what the first run planned.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harnesses.budget import BudgetConfig
from harnesses.models.base import ModelOptions
from harnesses.models.provider import known_prefixes, unknown_prefix_message
from kernelarena.errors import ConfigError, UserError, first_problem


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class ModelSpec(ModelOptions):
    """A model under test: its id, sweep-level settings, and the client options of
    `harnesses.models.base.ModelOptions` (base_url, api_key_env, temperature, max_tokens,
    max_retries, timeout_s, retry waits, extra request parameters)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    id: str
    """Model id as `provider:name`, e.g. `openai:gpt-5`, `scripted:reference`, `replay:PATH`."""
    name: str = ""
    """Display name and leaderboard key; defaults to `id`. Set it to run one id twice with
    different options (e.g. two temperatures)."""
    concurrency: int | None = Field(default=None, gt=0)
    """Trials of this model running at once (on top of the provider and total limits)."""
    harness: str | None = None
    """This model's harness, instead of the sweep's `harness`: list one id twice, once with
    `harness = "claude-code"`, and the leaderboard shows it under both harnesses. The name
    then defaults to `id+harness`."""

    @field_validator("id")
    @classmethod
    def _known_prefix(cls, value: str) -> str:
        prefix, sep, rest = value.partition(":")
        if not sep or not rest:
            raise ValueError(
                f"model id '{value}' needs a provider prefix, e.g. 'openai:gpt-5' (known: {', '.join(known_prefixes())})"
            )
        if prefix not in known_prefixes():
            raise ValueError(unknown_prefix_message(prefix, value))
        return value

    @model_validator(mode="after")
    def _default_name(self) -> ModelSpec:
        if not self.name:
            self.name = f"{self.id}+{self.harness}" if self.harness else self.id
        return self

    @property
    def provider(self) -> str:
        return self.id.partition(":")[0]

    def client_options(self) -> dict[str, Any]:
        """Options passed through to `create_model`: only those differing from the defaults, so
        clients that take no options (scripted, replay) get none, also from a frozen spec
        (where every field reads as set)."""
        return self.model_dump(exclude_defaults=True, exclude={"id", "name", "concurrency", "harness"})


class SuiteSelection(_Strict):
    name: str | None = None
    """Suite name (`kernelarena suites`) or path of a suite folder."""
    path: str | None = None
    """A suite folder, e.g. an upstream `KernelBench/level1` (plain problem files, no suite.toml)
    or any folder with a suite.toml; a relative path is resolved against the spec file's folder.
    Give `name` or `path`, not both."""
    level: int | None = Field(default=None, ge=1)
    """With `path`: the level of every task of the folder (overrides the level a `level<N>`
    folder name or the suite.toml gives), for `levels` filters and tasks.json."""
    include: list[str] = ["*"]
    """Glob patterns over task ids; a task runs if it matches one of them."""
    exclude: list[str] = []
    """Glob patterns over task ids removed after `include`."""
    levels: list[int] = []
    """Keep only tasks of these levels; empty keeps every level."""

    @model_validator(mode="after")
    def _name_or_path(self) -> SuiteSelection:
        if (self.name is None) == (self.path is None):
            raise ValueError("give exactly one of `name` (a suite name) or `path` (a suite folder)")
        if self.path is not None and not self.path.strip():
            raise ValueError("`path` is empty; give the folder of the suite's task files")
        if self.level is not None and self.path is None:
            raise ValueError("`level` labels the tasks of a `path` suite; a named suite's levels come from its suite.toml")
        return self

    @property
    def target(self) -> str:
        """What `load_suite` takes: the name, else the folder."""
        return self.name if self.name is not None else str(self.path)


class ConcurrencySpec(_Strict):
    total: int = Field(default=8, gt=0)
    """Trials running at once across all models."""
    per_provider: dict[str, int] = {}
    """Trials at once per provider prefix, e.g. `{ openai = 4, anthropic = 2 }`."""
    default_per_provider: int = Field(default=4, gt=0)
    """Limit for providers not named in `per_provider`."""

    @field_validator("per_provider")
    @classmethod
    def _known_providers(cls, value: dict[str, int]) -> dict[str, int]:
        for provider, limit in value.items():
            if provider not in known_prefixes():
                raise ValueError(unknown_prefix_message(provider))
            if limit < 1:
                raise ValueError(f"limit for '{provider}' must be at least 1")
        return value


class SandboxSpec(_Strict):
    backend: Literal["auto", "docker", "process"] = "auto"
    """`docker` isolates each trial; `process` is the no-daemon fallback; `auto` picks docker
    when a daemon answers."""
    image: str = "kernelarena-sandbox:latest"
    """Docker image for agent and scoring sandboxes."""
    memory: str = "4g"
    """Memory limit per sandbox."""
    cpus: float = Field(default=2, gt=0)
    """CPU limit per sandbox."""


class ScoreSpec(_Strict):
    device: str = "auto"
    """Where kernels are scored: `auto`, `cpu` or `cuda`."""
    repetitions: int | None = Field(default=None, gt=0)
    """Timed repetitions; the suite's rule when unset."""
    warmup: int | None = Field(default=None, ge=0)
    """Warm-up runs before timing; the suite's rule when unset."""
    seeds: int | None = Field(default=None, gt=0)
    """Random input sets for the correctness check; the scorer's default when unset."""
    skip_timing: bool = False
    """Correctness and anti-hack checks only (no speedups); for smoke tests and benchmarks."""
    accept_weak_isolation: bool = False
    """Score even where the host cannot wall each kernel's process in completely (own PID, mount,
    network and IPC namespace, private files, no_new_privs, seccomp). Off: such a trial's scoring
    is refused with one line naming what is missing; on: score.json's `isolation` records it."""


class FailureSpec(_Strict):
    max_attempts: int = Field(default=2, gt=0)
    """Attempts per trial when the harness breaks or the model keeps erroring."""
    consecutive_to_pause: int = Field(default=3, gt=0)
    """Consecutive model-error trials of one provider before it is paused."""
    pause_s: float = Field(default=60, ge=0)
    """First pause of a failing provider; doubles on each further pause."""
    max_pause_s: float = Field(default=900, ge=0)
    """Cap on a provider's pause."""


class RaySpec(_Strict):
    """Where and how trials run when `executor = "ray"` (orchestrator/ray_executor.py)."""

    address: str | None = None
    """An existing cluster (`auto`, `HOST:PORT`, `ray://HOST:PORT`); unset starts a fresh Ray
    instance on this machine for the sweep's duration (also where another one runs here)."""
    trial_cpus: float = Field(default=1.0, gt=0)
    """Logical CPUs each trial task asks the cluster for (agent loop and its sandbox)."""
    image_tarball: str | None = None
    """Docker backend: a `docker save` tarball at this path, readable on every node (a shared
    folder). The driver writes it when absent; a node without the image loads it. Unset: a
    node without the image builds it (`kernelarena sandbox build-image`)."""


class SweepSpec(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9._-]+$")
    """Sweep name; the default output folder is `runs/<name>-<timestamp>`."""
    models: list[ModelSpec] = Field(min_length=1)
    """The models under test."""
    suites: list[SuiteSelection] = Field(min_length=1)
    """Suites and task filters."""
    harness: str = "minimal"
    """Agent harness (entry-point group `kernelarena.harnesses`)."""
    samples: int = Field(default=1, gt=0)
    """Independent trials per model and task (pass@1 is averaged over them)."""
    gpus: Literal["auto", "cpu"] | list[int] = "auto"
    """GPU ids scoring may use, one measurement per GPU at a time; `cpu` scores on the CPU;
    `auto` uses every visible CUDA device, else the CPU."""
    out: str | None = None
    """Output folder; default `runs/<name>-<timestamp>` under the current directory."""
    budget: BudgetConfig = BudgetConfig()
    """Per-trial limits (turns, tokens, wall time, dollars), the harness's own config."""
    concurrency: ConcurrencySpec = ConcurrencySpec()
    sandbox: SandboxSpec = SandboxSpec()
    score: ScoreSpec = ScoreSpec()
    failure: FailureSpec = FailureSpec()
    executor: Literal["local", "ray"] = "local"
    """`local` runs every trial on this machine; `ray` runs them as tasks of a Ray cluster
    (needs `pip install 'kernelarena[ray]'`); the ledger and the sweep folder stay here."""
    ray: RaySpec = RaySpec()

    @model_validator(mode="after")
    def _unique_model_names(self) -> SweepSpec:
        seen: set[str] = set()
        for model in self.models:
            if model.name in seen:
                raise ValueError(f"two models are named '{model.name}'; give one a distinct `name`")
            seen.add(model.name)
        return self

    def model(self, name: str) -> ModelSpec:
        return next(m for m in self.models if m.name == name)

    def harness_of(self, model: ModelSpec) -> str:
        return model.harness or self.harness


def parse_spec(data: dict[str, Any], source: str, base_dir: Path | None = None) -> SweepSpec:
    """Validate raw data; the first problem becomes a one-line `ConfigError` naming the field.
    Relative suite `path`s are made absolute against `base_dir` (the spec file's folder; the
    current directory when None), so the frozen spec names the folder whatever the cwd later."""
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as exc:
        where, msg = first_problem(exc)
        if msg.startswith("unknown field"):
            msg += " against docs/SWEEPS.md"
        raise ConfigError(f"{source}: {where}: {msg}") from None
    base = (base_dir or Path.cwd()).resolve()
    for selection in spec.suites:
        if selection.path is not None:
            selection.path = str((base / Path(selection.path).expanduser()).resolve())
    return spec


def load_spec(path: Path) -> SweepSpec:
    if not path.is_file():
        raise UserError(f"no sweep spec at {path}; pass a .toml file such as examples/demo.toml")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML ({exc}); fix the file") from None
    return parse_spec(data, str(path), base_dir=path.parent)
