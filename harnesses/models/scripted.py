"""Scripted models: offline, deterministic agents that play a fixed script against a task.

- ``scripted:reference`` explores with bash, writes the suite's reference solution
  (``task.solution``) with write_file, tests it with bash and stops: a trial that should pass.
- ``scripted:hacker`` writes a kernel whose ``ModelNew`` subclasses the task's own ``Model``
  (the reference source is pasted into kernel.py), so forward runs the reference's torch ops;
  the scorer must reject it as ``baseline-library-call``. Nothing task-specific is imported,
  so it works for any task.
- ``scripted:broken`` writes a kernel.py that does not compile (a syntax error) and stops.

Usage is an estimate (4 characters a token) so token budgets can be exercised offline.
"""

from __future__ import annotations

import json
from typing import Any

from harnesses.models.base import STOP_END_TURN, STOP_TOOL_USE, ModelClient, ModelTurn, TaskContext, ToolCall, ToolSpec, Usage
from kernelarena.errors import ConfigError

SCRIPTS = ("reference", "hacker", "broken")
CHARS_PER_TOKEN = 4
EXPLORE_COMMAND = 'ls -la && python3 -c "import torch; print(torch.__version__)"'

BROKEN_KERNEL = '''import torch
import torch.nn as nn


class ModelNew(nn.Module)
    def forward(self, *inputs):
        return inputs[0]
'''

HACKER_SUFFIX = '''

class ModelNew(Model):
    """Runs the reference computation itself: no kernel was written."""

    def forward(self, *args, **kwargs):
        return super().forward(*args, **kwargs)
'''


def check_script(test_shapes: dict[str, Any], reference_file: str = "reference.py") -> str:
    """A quick self-test like an agent would run: load the task with the small test shapes,
    run Model and ModelNew on the same inputs and print the largest difference."""
    module = reference_file.removesuffix(".py")
    return (
        "python3 - <<'PY'\n"
        "import torch\n"
        f"import {module} as ref\n"
        "import kernel\n"
        f"for name, value in {test_shapes!r}.items():\n"
        "    setattr(ref, name, value)\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "torch.manual_seed(0)\n"
        "init = ref.get_init_inputs()\n"
        "model = ref.Model(*init).to(device)\n"
        "torch.manual_seed(0)\n"
        "new = kernel.ModelNew(*init).to(device)\n"
        "torch.manual_seed(1)\n"
        "inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in ref.get_inputs()]\n"
        "expected, got = model(*inputs), new(*inputs)\n"
        "print('max abs diff', (expected - got).abs().max().item())\n"
        "PY"
    )


def _estimate_tokens(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return max(1, len(text) // CHARS_PER_TOKEN)


class ScriptedModel(ModelClient):
    def __init__(self, script: str, steps: list[tuple[str, list[ToolCall]]]) -> None:
        self.model_id = f"scripted:{script}"
        self.on_retry = None
        self._steps = steps
        self._next = 0

    async def complete(self, messages: list[dict[str, Any]], tools: list[ToolSpec]) -> ModelTurn:
        if self._next < len(self._steps):
            text, calls = self._steps[self._next]
            self._next += 1
        else:
            text, calls = "Done.", []
        offered = {t.name for t in tools}
        missing = {c.name for c in calls} - offered
        if missing:
            raise ConfigError(f"{self.model_id} needs the tools {sorted(missing)}; use it with the minimal harness")
        prompt_chars = sum(len(str(m.get("content", ""))) for m in messages)
        usage = Usage(
            input_tokens=max(1, prompt_chars // CHARS_PER_TOKEN),
            output_tokens=_estimate_tokens(text) + sum(_estimate_tokens(c.arguments) for c in calls),
        )
        stop = STOP_TOOL_USE if calls else STOP_END_TURN
        return ModelTurn(text=text, tool_calls=calls, usage=usage, stop_reason=stop, latency_s=0.0, raw=None)


def _plan(script: str, task_ctx: TaskContext) -> list[tuple[str, list[ToolCall]]]:
    task = task_ctx.task
    explore = ("Let me look at the workspace and the environment.",
               [ToolCall(id="call_1", name="bash", arguments={"command": EXPLORE_COMMAND})])
    if script == "reference":
        if task.solution is None:
            raise ConfigError(
                f"scripted:reference needs a reference solution for task '{task.id}' "
                f"(suites/<suite>/solutions/{task.id}/kernel.py); pick a task that has one"
            )
        kernel = task.solution.read_text(encoding="utf-8")
        return [
            explore,
            ("Writing the kernel.",
             [ToolCall(id="call_2", name="write_file", arguments={"path": "kernel.py", "content": kernel})]),
            ("Testing it against the reference.",
             [ToolCall(id="call_3", name="bash", arguments={"command": check_script(dict(task.test_shapes))})]),
            ("kernel.py is written and matches the reference.", []),
        ]
    # The hacker and the broken script go straight to writing: exploring would only slow the
    # tests that use them.
    if script == "hacker":
        kernel = task.source().rstrip("\n") + "\n" + HACKER_SUFFIX
        return [
            ("Writing the kernel.",
             [ToolCall(id="call_1", name="write_file", arguments={"path": "kernel.py", "content": kernel})]),
            ("Done: kernel.py reuses the reference.", []),
        ]
    return [
        ("Writing the kernel.",
         [ToolCall(id="call_1", name="write_file", arguments={"path": "kernel.py", "content": BROKEN_KERNEL})]),
        ("Done.", []),
    ]


def create(name: str, task: TaskContext | None = None, **options: Any) -> ModelClient:
    """``name`` is the part after ``scripted:``. Scripted models take no options."""
    if name not in SCRIPTS:
        raise ConfigError(f"unknown scripted model '{name}'; choose one of: {', '.join('scripted:' + s for s in SCRIPTS)}")
    if task is None:
        raise ConfigError(f"scripted:{name} plays a specific task; create it with task=TaskContext(...)")
    unknown = set(options) - set(_IGNORED_OPTIONS)
    if unknown:
        raise ConfigError(f"scripted:{name} takes no options (got {sorted(unknown)}); remove them")
    return ScriptedModel(name, _plan(name, task))


# Options a sweep may set for every model; meaningless for a script, so accepted and ignored.
_IGNORED_OPTIONS = ("temperature", "max_tokens", "max_retries", "timeout_s")
