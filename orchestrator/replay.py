"""`kernelarena replay`: audit one trial from its transcript.

Shows the conversation readably; `--rescore` scores the trial's kernel.py again in a fresh scoring
sandbox and compares with the recorded score; `--reexec` re-runs the trial with the `replay:`
model (the recorded responses, so the same bash/write_file calls) in fresh sandboxes and reports
which tool outputs differ once timings, addresses and temp paths are normalised.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from harnesses.registry import HARNESSES
from harnesses.transcript import Transcript, read_events
from harnesses.trial import TrialBroken, TrialSpec, resolve_auto_device, run_trial, score_in_sandbox
from kernelarena.errors import UserError
from kernelarena.text import truncate
from orchestrator.trial_files import KERNEL_FILE, TRANSCRIPT_FILE, read_score
from scorer.tasks.suites import load_suite

SPEEDUP_TOLERANCE = 0.25
"""Default relative speedup difference accepted by --rescore (timings on a shared host wander;
CPU timings of interpreted Triton wander far more)."""


def resolve_transcript(path: Path) -> Path:
    if path.is_dir():
        path = path / TRANSCRIPT_FILE
    if not path.is_file():
        raise UserError(f"no transcript at {path}; pass a trial's transcript.jsonl or its folder")
    return path


def load_events(path: Path) -> list[dict[str, Any]]:
    events = list(read_events(path))
    if not events or events[0].get("type") != "trial_start":
        raise UserError(f"{path} does not start with a trial_start event; is it a KernelArena transcript?")
    return events


def clip(text: str, limit: int) -> str:
    return truncate(text, limit, note="; --full shows all")


def _args_text(arguments: Any) -> str:
    if isinstance(arguments, dict) and set(arguments) <= {"command"}:
        return str(arguments.get("command", ""))
    if isinstance(arguments, dict) and "path" in arguments and "content" in arguments:
        return f"{arguments['path']}:\n{arguments['content']}"
    return json.dumps(arguments, indent=1)


def _user_text(message: dict[str, Any]) -> str:
    """A user message's own text; an agent CLI's content blocks without its tool results
    (shown as tool_result events already)."""
    content = message.get("content", "")
    if not isinstance(content, list):
        return str(content)
    return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") in ("text", "input_text"))


def render(events: list[dict[str, Any]], console: Console, full: bool = False) -> None:
    limit = 0 if full else 1500
    for event in events:
        kind, p = event.get("type"), event.get("payload") or {}
        if kind == "trial_start":
            spec = p.get("spec") or {}
            console.print(Panel(
                f"trial {p.get('trial_id')}\nmodel {spec.get('model')}   harness {p.get('harness')}   "
                f"device {p.get('device')}\ntask {spec.get('suite')}/{spec.get('task')}   started {event.get('ts')}",
                title="trial", expand=False))
        elif kind == "model_request":
            for message in p.get("messages") or []:
                text = _user_text(message) if message.get("role") == "user" else ""
                if text:
                    console.print(Panel(escape(clip(text, limit)), title="user", expand=False))
        elif kind == "model_response":
            usage = p.get("usage") or {}
            title = (f"assistant · turn {p.get('turn')} · {usage.get('input_tokens', 0)} in / "
                     f"{usage.get('output_tokens', 0)} out · {p.get('stop_reason')}")
            console.print(Panel(escape(clip(str(p.get("text") or "(no text)"), limit)), title=title, expand=False))
        elif kind == "tool_call":
            console.print(Panel(escape(clip(_args_text(p.get("arguments")), limit)),
                                title=f"tool call · {p.get('name')} · {p.get('id')}", expand=False))
        elif kind == "tool_result":
            extra = f" · exit {p['exit_code']}" if "exit_code" in p else ""
            console.print(Panel(escape(clip(str(p.get("output", "")), limit)),
                                title=f"tool result · {p.get('name')}{extra} · {p.get('duration_s')}s", expand=False))
        elif kind == "retry":
            console.print(f"[yellow]retry[/] attempt {p.get('attempt')} after {escape(str(p.get('error')))}; "
                          f"waited {p.get('wait_s')}s")
        elif kind == "budget":
            console.print(f"[bold red]budget hit[/]: {p.get('kind')} used {p.get('used')} of {p.get('limit')}")
        elif kind == "error":
            console.print(f"[red]error[/] ({p.get('source')}): {escape(clip(str(p.get('message')), limit))}")
        elif kind == "harness_event":
            console.print(f"[dim]harness: {escape(json.dumps(p))}[/]")
        elif kind == "score":
            console.print(Panel(escape(score_text(p)), title="score", expand=False))
        elif kind == "trial_end":
            u = p.get("usage") or {}
            console.print(f"[bold]end[/]: exit {p.get('exit_reason')} · verdict {p.get('verdict')} · "
                          f"{u.get('turns')} turns · {u.get('input_tokens')} in / {u.get('output_tokens')} out tokens · "
                          f"${u.get('dollars') if u.get('dollars') is not None else '-'} · {p.get('duration_s')}s"
                          + (" · INTERRUPTED" if p.get("interrupted") else ""))
    if events[-1].get("type") != "trial_end":
        console.print("[bold red]the transcript has no trial_end: the trial was cut short[/]")


def score_text(score: dict[str, Any]) -> str:
    timing = score.get("timing") or {}
    lines = [f"verdict {score.get('verdict')}"]
    if timing.get("speedup") is not None:
        lines.append(f"speedup {timing['speedup']:.3f} "
                     f"(baseline {timing.get('baseline_ms')} ms, kernel {timing.get('kernel_ms')} ms)")
    for hack in score.get("hacks") or []:
        lines.append(f"hack {hack.get('pattern')}: {hack.get('evidence')}")
    for flag in score.get("flags") or []:
        lines.append(f"flag {flag.get('pattern')}: {flag.get('evidence')}")
    if score.get("error"):
        lines.append(f"error: {str(score['error'])[:500]}")
    return "\n".join(lines)


@dataclass
class RescoreComparison:
    recorded_verdict: str | None
    new_verdict: str | None
    recorded_speedup: float | None
    new_speedup: float | None
    tolerance: float = SPEEDUP_TOLERANCE

    @property
    def speedup_rel_diff(self) -> float | None:
        if self.recorded_speedup is None or self.new_speedup is None or self.recorded_speedup == 0:
            return None
        return abs(self.new_speedup - self.recorded_speedup) / abs(self.recorded_speedup)

    @property
    def agrees(self) -> bool:
        diff = self.speedup_rel_diff
        return self.recorded_verdict == self.new_verdict and (diff is None or diff <= self.tolerance)


def _trial_spec(events: list[dict[str, Any]]) -> TrialSpec:
    return TrialSpec.model_validate(events[0]["payload"]["spec"])


async def rescore_trial(transcript: Path, events: list[dict[str, Any]]) -> RescoreComparison:
    trial_dir = transcript.parent
    kernel = trial_dir / KERNEL_FILE
    recorded = read_score(trial_dir)
    recorded_verdict = recorded.verdict if recorded else None
    recorded_speedup = recorded.speedup if recorded else None
    spec = _trial_spec(events)
    if not kernel.is_file():
        return RescoreComparison(recorded_verdict, "no_kernel", recorded_speedup, None)
    suite = load_suite(spec.suite)
    with tempfile.TemporaryDirectory(prefix="kernelarena-rescore-") as tmp:
        scratch = Transcript(Path(tmp) / TRANSCRIPT_FILE)
        try:
            score = await score_in_sandbox(spec, suite, suite.task(spec.task), resolve_auto_device(spec.device), kernel, scratch)
        finally:
            scratch.close()
    return RescoreComparison(
        recorded_verdict=recorded_verdict,
        new_verdict=score.verdict,
        recorded_speedup=recorded_speedup,
        new_speedup=score.speedup,
    )


_NORMALISERS = (
    (re.compile(r"(real|user|sys)\s+\d+m[\d.]+s"), r"\1 <TIME>"),
    (re.compile(r"\b\d+(\.\d+)?\s*(ms|s|sec|seconds|us|µs|ns)\b"), "<TIME>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<ADDR>"),
    (re.compile(r"/tmp/[^\s'\"]+"), "<TMP>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?\S*"), "<DATE>"),
    # `ls -l`: modification times, link counts, and the parent directory (outside the sandbox's
    # own files: the host's /tmp for the process backend).
    (re.compile(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d{1,2}\s+(\d{1,2}:\d{2}|\d{4})\b"), "<MTIME>"),
    (re.compile(r"^([bcdlps-][rwxsStT-]{9}[.+@]?)\s+\d+", re.MULTILINE), r"\1 <N>"),
    (re.compile(r"^[bcdlps-][rwxsStT-]{9}.*\s\.\.$", re.MULTILINE), "<PARENT>"),
    (re.compile(r"^total \d+$", re.MULTILINE), "total <N>"),
)


def normalise(text: str, workdirs: tuple[str, ...] = ()) -> str:
    for workdir in workdirs:
        if workdir:
            text = text.replace(workdir, "<WORKDIR>")
    for pattern, repl in _NORMALISERS:
        text = pattern.sub(repl, text)
    return text


@dataclass
class ToolDiff:
    index: int
    name: str
    call: str
    recorded: str
    replayed: str


def _tool_results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e.get("payload") or {} for e in events if e.get("type") == "tool_result"]


def _workdir(events: list[dict[str, Any]]) -> str:
    """The sandbox workdir the prompt named, so paths inside it compare equal across sandboxes."""
    for e in events:
        if e.get("type") == "model_request":
            for m in (e.get("payload") or {}).get("messages") or []:
                found = re.search(r"(/[\w./-]*work[\w./-]*)", str(m.get("content", "")))
                if found:
                    return found.group(1).rstrip(".")
    return ""


def diff_tool_outputs(recorded: list[dict[str, Any]], replayed: list[dict[str, Any]]) -> tuple[list[ToolDiff], int]:
    """(differences, number compared): tool results paired in order."""
    rec_results, new_results = _tool_results(recorded), _tool_results(replayed)
    workdirs = tuple(w for w in (_workdir(recorded), _workdir(replayed)) if w)
    calls = [e.get("payload") or {} for e in recorded if e.get("type") == "tool_call"]
    diffs = []
    for i in range(max(len(rec_results), len(new_results))):
        a = rec_results[i] if i < len(rec_results) else {"output": "(not run)"}
        b = new_results[i] if i < len(new_results) else {"output": "(not run)"}
        if normalise(str(a.get("output", "")), workdirs) != normalise(str(b.get("output", "")), workdirs):
            call = _args_text(calls[i].get("arguments")) if i < len(calls) else ""
            diffs.append(ToolDiff(i, str(a.get("name") or b.get("name")), call,
                                  str(a.get("output", "")), str(b.get("output", ""))))
    return diffs, max(len(rec_results), len(new_results))


async def reexec_trial(transcript: Path, events: list[dict[str, Any]], out_dir: Path) -> tuple[list[ToolDiff], int, Path]:
    recorded = _trial_spec(events)
    if not HARNESSES.get(recorded.harness).replayable:
        raise UserError(f"--reexec replays recorded tool calls, but harness '{recorded.harness}' ran its own; use --rescore")
    spec = recorded.model_copy(update={
        "model": f"replay:{transcript.resolve()}", "model_options": {}, "trial_id": f"{recorded.trial_id}#reexec",
    })
    try:
        await run_trial(spec, out_dir)
    except TrialBroken as exc:
        raise UserError(f"re-execution could not run ({exc}); check the sandbox with `kernelarena sandbox run`") from None
    replayed = list(read_events(out_dir / TRANSCRIPT_FILE))
    diffs, compared = diff_tool_outputs(events, replayed)
    return diffs, compared, out_dir


def replay_command(path: Path, *, rescore: bool, reexec: bool, full: bool, console: Console,
                   tolerance: float = SPEEDUP_TOLERANCE) -> int:
    """Returns the exit code: 0, or 1 when a re-check disagrees with the record."""
    transcript = resolve_transcript(path)
    events = load_events(transcript)
    render(events, console, full=full)
    code = 0
    if rescore:
        cmp = asyncio.run(rescore_trial(transcript, events))
        cmp.tolerance = tolerance
        diff = cmp.speedup_rel_diff
        console.print(Panel(
            f"recorded: {cmp.recorded_verdict} speedup {cmp.recorded_speedup}\n"
            f"rescored: {cmp.new_verdict} speedup {cmp.new_speedup}\n"
            f"speedup difference: {'-' if diff is None else f'{diff:.1%}'} (tolerance {cmp.tolerance:.0%})\n"
            + ("AGREES" if cmp.agrees else "DIFFERS"),
            title="rescore", expand=False))
        code |= 0 if cmp.agrees else 1
    if reexec:
        out_dir = Path(tempfile.mkdtemp(prefix="kernelarena-reexec-"))
        diffs, compared, out_dir = asyncio.run(reexec_trial(transcript, events, out_dir))
        for d in diffs:
            console.print(Panel(
                f"call: {escape(clip(d.call, 400))}\n--- recorded\n{escape(clip(d.recorded, 800))}\n"
                f"--- re-executed\n{escape(clip(d.replayed, 800))}",
                title=f"tool output {d.index} ({d.name}) differs", expand=False))
        console.print(f"re-executed {compared} tool call(s): {len(diffs)} differ after normalising timings; "
                      f"new trial files in {out_dir}", highlight=False, soft_wrap=True)
        code |= 1 if diffs else 0
    return code
