"""The one config of a sandbox, shared by both backends."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
_UNIT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}

#: Where the KernelArena source tree is visible inside a container.
CONTAINER_CODE_ROOT = "/opt/kernelarena"
#: The writable workspace inside a container.
CONTAINER_WORKDIR = "/workspace"


def parse_size(value: str | int) -> int:
    """'4g', '512m', '1.5G', '1024' -> bytes (binary units, as Docker reads them)."""
    if isinstance(value, int):
        return value
    match = _SIZE.match(value)
    if not match:
        raise ValueError(f"'{value}' is not a size; write it like 4g, 512m or 1048576")
    return int(float(match.group(1)) * _UNIT[match.group(2).lower()])


class Mount(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    host: Path
    """Folder or file on the host."""
    target: str
    """Absolute path inside the sandbox (the docker backend only; the process backend sees
    host paths as they are and ignores it)."""
    read_only: bool = True
    """Writable mounts let a trial change host files; leave them read-only unless needed."""

    @field_validator("target")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError(f"mount target '{value}' must be an absolute path")
        return value


class SandboxConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["auto", "docker", "process"] = "auto"
    """`docker` isolates each trial in a container; `process` is the fallback where no daemon
    runs (weaker isolation, see docs/SANDBOX.md); `auto` picks docker when a daemon answers."""
    image: str = "kernelarena-sandbox:latest"
    """Docker image (`kernelarena sandbox build-image` builds the default one offline)."""
    gpus: Literal["all", "none"] | list[int] = "none"
    """GPUs passed through: all of them, none, or chosen device ids."""
    memory: str = "4g"
    """Memory limit (RAM, no swap) for everything the sandbox runs."""
    cpus: float = Field(default=2, gt=0)
    """CPU share, in cores."""
    pids: int = Field(default=256, ge=8)
    """Most processes/threads alive at once; contains fork bombs."""
    network: bool = False
    """Network access from inside; off by default (models are called from the host)."""
    env: dict[str, str] = {}
    """The only variables passed in besides the sandbox's own (PATH, HOME, PYTHONPATH...);
    nothing of the host's environment leaks in otherwise."""
    mounts: list[Mount] = []
    """Extra host paths made visible (suite folders outside the repo, a kernel to score)."""
    labels: dict[str, str] = {}
    """Container labels, e.g. kernelarena.sweep and kernelarena.trial; `sandbox prune --sweep`
    selects on kernelarena.sweep."""
    output_limit_bytes: int = Field(default=1_000_000, ge=1024)
    """Per stream and command; past it the middle is cut and a marker gives the full size."""
    workspace_size: str = "2g"
    """Size of the writable workspace (and the per-file size limit of the process backend)."""
    code_dirs: list[str] = ["scorer", "suites", "kernelarena"]
    """Top-level folders of the KernelArena tree made visible (read-only) at `code_root`;
    sweep results, the venv and git history stay out of reach of the code under test."""
    nested_wall: bool = False
    """The scorer's wall around each kernel worker (scorer/workers/wall.py) needs user, PID and
    mount namespaces inside the sandbox: a docker scoring sandbox then runs without docker's
    seccomp profile, which refuses them (its commands keep uid 1000, no capabilities and
    no_new_privs; the kernel gets the scorer's own, stricter filter). A process scoring sandbox
    started as root keeps root instead of uid 65534, so the scorer can give each kernel a uid of
    its own."""
    expose_solutions: bool = False
    """Reference solutions (`suites/*/solutions`) are hidden from the docker sandbox so an
    agent cannot copy them; turn on only for trusted runs."""

    @field_validator("memory", "workspace_size")
    @classmethod
    def _size(cls, value: str) -> str:
        parse_size(value)
        return value

    @field_validator("gpus")
    @classmethod
    def _gpu_ids(cls, value: str | list[int]) -> str | list[int]:
        if isinstance(value, list):
            if not value or any(i < 0 for i in value):
                raise ValueError("gpus must be 'all', 'none' or a non-empty list of device ids >= 0")
        return value

    @field_validator("code_dirs")
    @classmethod
    def _plain_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not name or "/" in name or name.startswith("."):
                raise ValueError(f"code_dirs entry '{name}' must be a top-level folder name")
        return value

    @property
    def memory_bytes(self) -> int:
        return parse_size(self.memory)

    @property
    def workspace_bytes(self) -> int:
        return parse_size(self.workspace_size)

    @property
    def wants_gpu(self) -> bool:
        return self.gpus != "none"


def parse_gpus(text: str) -> Literal["all", "none"] | list[int]:
    """The CLI's --gpus value: all, none, or comma-separated ids ('0,2')."""
    text = text.strip().lower()
    if text == "all":
        return "all"
    if text == "none":
        return "none"
    try:
        ids = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--gpus '{text}' is not all, none or a list of ids like 0,1") from None
    if not ids:
        raise ValueError("--gpus needs all, none or ids like 0,1")
    return ids
