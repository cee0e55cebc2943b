"""The judge believes nothing the kernel's process says that it does not check itself.

Each attack in trust_attacks/ (and the protocol-violation corpus) speaks for the scorer from inside
the kernel's process. The static layer refuses their literal imports of the scorer on its own, so
here it is switched off: what is left (typed replies, exact counts, commitments, the channel read
from outside) must catch each attack alone, and pass an honest kernel with the channel watched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scorer import ScoreOptions
from scorer.checks import static as static_checks
from scorer.judge.session import ScoringSession
from scorer.tasks.suites import load_suite

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ATTACKS = HERE / "trust_attacks"
CORPUS = ROOT / "tests" / "hacks" / "attacks" / "protocol-violation"


@pytest.fixture(scope="module")
def judge():
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(static_checks, "analyze_source", lambda *args, **kwargs: [])
        with ScoringSession(ScoreOptions(device="cpu", seeds=2, warmup=1, repetitions=5)) as session:
            demo = load_suite("demo")
            yield lambda kernel: session.score(demo, "swish", kernel, device="cpu")


def _violation(score) -> str:
    found = [h["evidence"] for h in score.hacks if h["pattern"] == "protocol-violation"]
    assert score.verdict == "hack_detected" and found, (score.verdict, score.error, score.hacks)
    return found[0]


@pytest.mark.slow
def test_an_honest_kernel_passes_with_its_channel_watched(judge) -> None:
    score = judge(ROOT / "suites" / "demo" / "solutions" / "swish" / "kernel.py")
    assert score.verdict == "passed", (score.error, score.hacks)
    assert score.isolation.get("channel") == "watched"


@pytest.mark.slow
def test_a_relay_over_the_reply_descriptor_is_seen_from_outside(judge) -> None:
    assert "channel" in _violation(judge(CORPUS / "relay_scrubs_replies.py"))


@pytest.mark.slow
def test_a_reply_that_skips_a_trial_the_judge_asked_for_is_a_violation(judge) -> None:
    assert "repeat-0" not in _violation(judge(CORPUS / "drops_a_trial.py")).split("asked for")[0]


@pytest.mark.slow
def test_nan_in_the_reported_times_is_a_violation(judge) -> None:
    assert "NaN" in _violation(judge(ATTACKS / "nan_in_times.py"))


@pytest.mark.slow
def test_outputs_computed_after_the_keep_was_revealed_break_the_commitment(judge) -> None:
    assert "committed" in _violation(judge(ATTACKS / "computes_only_kept_reps.py"))


@pytest.mark.slow
def test_a_batch_of_fewer_rows_than_asked_is_a_violation(judge) -> None:
    assert "rows" in _violation(judge(ATTACKS / "one_batch_row.py"))


@pytest.mark.slow
def test_a_swapped_module_table_entry_and_rewritten_code_are_seen_after_load(judge) -> None:
    score = judge(ATTACKS / "swapped_module_entry.py")
    evidence = " ".join(h["evidence"] for h in score.hacks if h["pattern"] == "timer-patching")
    assert score.verdict == "hack_detected", (score.error, score.hacks)
    assert "module table's entry for scorer.checks.census" in evidence and "stop_counting was replaced" in evidence


@pytest.mark.slow
def test_a_process_beside_the_timed_loop_is_seen_from_outside(judge) -> None:
    score = judge(ATTACKS / "helper_process.py")
    evidence = [h["evidence"] for h in score.hacks if h["pattern"] == "thread-injection"]
    assert any("read by the judge from /proc" in e for e in evidence), (score.verdict, score.error, score.hacks)
