"""The domain's panel shortlist (engine.shortlist.panel_shortlists): size, order, the mean over
reviewers, the ideas most reviewers have read left out. No database."""

from __future__ import annotations

import pytest

from apps.judges.engine.shortlist import PanelCandidate, panel_shortlists


def _c(reviewer, idea, score, confidence=50, signal="panel", dim=1, lo=1, hi=5):
    return PanelCandidate(reviewer, idea, dim, score, confidence, signal, lo, hi)


def test_ideas_are_ranked_by_the_mean_of_the_reviewers_predictions_ties_by_confidence():
    cands = [
        _c(1, 10, 5), _c(2, 10, 3),  # mean 4.0, confidence 50
        _c(1, 11, 4), _c(2, 11, 4, confidence=80),  # mean 4.0, confidence 65: before idea 10
        _c(1, 12, 5), _c(2, 12, 5), _c(3, 12, 2),  # mean 4.0, confidence 50, id 12 after 10
        _c(1, 13, 5), _c(2, 13, 5),  # mean 5.0: first
        _c(1, 14, 1),  # mean 1.0: last
    ]  # fmt: skip
    entries = [e for e in panel_shortlists(cands, readers={}, size=10) if e.dimension_id == 1]
    assert [e.idea_id for e in entries] == [13, 11, 10, 12, 14]
    assert [e.rank for e in entries] == [1, 2, 3, 4, 5]
    assert entries[0].predicted_score == 5.0 and entries[1].confidence == 65
    assert [e.panel_size for e in entries] == [2, 2, 2, 3, 1]


def test_at_most_size_ideas_per_list_and_one_list_over_all_dimensions():
    cands = [_c(r, i, 1 + (i + r) % 5, dim=d) for r in (1, 2, 3) for i in range(30) for d in (1, 2)]
    entries = panel_shortlists(cands, readers={}, size=4)
    by_list: dict = {}
    for e in entries:
        by_list.setdefault(e.dimension_id, []).append(e)
    assert set(by_list) == {1, 2, None}
    assert all(len(v) == 4 for v in by_list.values())
    overall = by_list[None]
    assert all(0.0 <= e.predicted_score <= 1.0 for e in overall)
    assert [e.predicted_score for e in overall] == sorted(
        (e.predicted_score for e in overall), reverse=True
    )
    with pytest.raises(ValueError, match="got 0"):
        panel_shortlists(cands, readers={}, size=0)


def test_ideas_read_by_most_reviewers_are_left_out_and_signals_are_the_most_common():
    cands = [
        _c(1, 20, 5, signal="text"), _c(2, 20, 5, signal="panel"), _c(3, 20, 5, signal="panel"),
        _c(1, 21, 4),
    ]  # fmt: skip
    # Idea 21: one prediction, two reviewers have scored it: most have read it.
    entries = panel_shortlists(cands, readers={(1, 21): 2, (1, 20): 1}, size=5)
    per_dim = [e for e in entries if e.dimension_id == 1]
    assert [e.idea_id for e in per_dim] == [20]
    assert per_dim[0].signal == "panel"
    # Unscored predictions never count.
    assert not panel_shortlists([_c(1, 30, None)], readers={}, size=3)
