"""Ranks by confidence (LMArena's rule) on hand-made intervals whose answers are counted by hand."""

from __future__ import annotations

from orchestrator.ranking import confidence_ranks, rank_note


def test_overlapping_intervals_share_rank_one_and_a_model_wholly_below_does_not() -> None:
    intervals = [
        (1.29, 3.12),  # A: the highest score
        (1.11, 2.32),  # B: overlaps A
        (1.00, 1.40),  # C: overlaps A and B
        (0.95, 1.30),  # D: overlaps all three
        (0.10, 0.90),  # E: wholly below A, B, C and D (0.90 < 0.95)
    ]
    assert confidence_ranks(intervals) == [
        (1, (1, 4)),  # nobody above; E is wholly below: worst 5 - 1
        (1, (1, 4)),
        (1, (1, 4)),
        (1, (1, 4)),
        (5, (5, 5)),  # four intervals wholly above
    ]


def test_a_chain_of_overlaps_gives_ranks_between() -> None:
    # A overlaps B, B overlaps C, A does not overlap C: C is below A only.
    assert confidence_ranks([(5.0, 6.0), (3.0, 5.5), (1.0, 4.0)]) == [(1, (1, 2)), (1, (1, 3)), (2, (2, 3))]


def test_rows_without_an_interval_rank_after_all_others_and_share_that_rank() -> None:
    # [0, 0]: a score of 0 in every resample (no correct kernel); None: no finished trial.
    ranks = confidence_ranks([(0.0, 0.5), None, (1.0, 2.0), (0.0, 0.0)])
    assert ranks == [(2, (2, 2)), (3, (3, 4)), (1, (1, 1)), (3, (3, 4))]


def test_point_scores_rank_by_score_with_exact_ties_shared() -> None:
    assert confidence_ranks([(2.0, 2.0), (1.0, 1.0), (2.0, 2.0), (0.5, 0.5)]) == [
        (1, (1, 2)), (3, (3, 3)), (1, (1, 2)), (4, (4, 4))]


def test_the_note_says_which_rule_set_the_rank() -> None:
    assert "wholly above" in rank_note(True) and "LMArena" in rank_note(True)
    assert "no bootstrap" in rank_note(False)
    assert "\n" not in rank_note(True) + rank_note(False)
