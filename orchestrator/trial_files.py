"""Reads a finished trial folder (score.json, transcript.jsonl) into the ledger's `TrialResult`.

The files are the source of truth: the ledger and index only cache what they say, so a sweep
folder can always be re-indexed from its trial folders alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harnesses.transcript import read_events
from orchestrator.ledger import TrialResult
from scorer.score import Score

SCORE_FILE = "score.json"
TRANSCRIPT_FILE = "transcript.jsonl"
KERNEL_FILE = "kernel.py"
# What run_trial writes; a trial folder missing one of them is not complete.
TRIAL_FILES = (TRANSCRIPT_FILE, SCORE_FILE)


def read_score(trial_dir: Path) -> Score | None:
    """The trial's score.json as a `Score`: the one reader of it for the orchestrator and the web
    app. None when there is none, or one this scorer cannot read (torn, another schema version)."""
    try:
        data = json.loads((trial_dir / SCORE_FILE).read_text(encoding="utf-8"))
        return Score.from_dict(data) if isinstance(data, dict) else None
    except (OSError, ValueError, TypeError):  # JSONDecodeError is a ValueError
        return None


def _usage_from_transcript(path: Path) -> tuple[dict[str, Any], str | None, str | None]:
    """(usage, exit_reason, last error) from the transcript; usage from trial_end when present,
    else summed over model responses (a trial cut short has no trial_end)."""
    summed = {"input_tokens": 0, "output_tokens": 0, "dollars": 0.0}
    final: dict[str, Any] | None = None
    exit_reason = None
    last_error = None
    if not path.is_file():
        return summed, exit_reason, "no transcript written"
    for event in read_events(path):
        payload = event.get("payload") or {}
        kind = event.get("type")
        if kind == "model_response":
            usage = payload.get("usage") or {}
            summed["input_tokens"] += int(usage.get("input_tokens") or 0)
            summed["output_tokens"] += int(usage.get("output_tokens") or 0)
            summed["dollars"] += float(payload.get("dollars") or usage.get("dollars") or 0.0)
        elif kind == "error":
            last_error = str(payload.get("message") or payload.get("error") or payload)[:500]
        elif kind == "trial_end":
            exit_reason = payload.get("exit_reason")
            usage = payload.get("usage")
            if isinstance(usage, dict):
                final = usage
    if final is not None:
        return {
            "input_tokens": int(final.get("input_tokens") or 0),
            "output_tokens": int(final.get("output_tokens") or 0),
            "dollars": float(final.get("dollars") or 0.0),
        }, exit_reason, last_error
    return summed, exit_reason, last_error


def _pattern_ids(findings: list[dict[str, str]]) -> list[str]:
    return [str(f.get("pattern")) for f in findings if isinstance(f, dict) and f.get("pattern")]


def summarize_trial(trial_dir: Path) -> TrialResult:
    usage, exit_reason, error = _usage_from_transcript(trial_dir / TRANSCRIPT_FILE)
    score = read_score(trial_dir)
    if score is None:
        missing = "score.json unreadable" if (trial_dir / SCORE_FILE).is_file() else "no score.json written"
        return TrialResult(exit_reason=exit_reason, error=error or missing, **usage)
    speedup = score.speedup
    return TrialResult(
        verdict=score.verdict,
        speedup=float(speedup) if isinstance(speedup, (int, float)) else None,
        exit_reason=exit_reason,
        error=error if exit_reason in ("error", "credentials") else None,
        hacks=_pattern_ids(score.hacks),
        flags=_pattern_ids(score.flags),
        contended=score.contended,
        **usage,
    )


def is_complete(trial_dir: Path) -> bool:
    return all((trial_dir / name).is_file() for name in TRIAL_FILES)
