"""The idea page's standing reads one idea off the stored slices (presenters.idea_standing):
the same rank, P(top N) and row as Decide's full board gives that idea."""

from __future__ import annotations

import copy

import pytest

from apps.decisions import presenters as P
from apps.decisions.ranking.cut import with_top_n
from apps.decisions.ranking.model import ALL
from apps.decisions.ranking.rows import slice_rows
from apps.decisions.selectors import snapshot_domain_slices
from apps.screening.selectors import frame as ratings

pytestmark = pytest.mark.django_db


def as_decide_shows_it(slices, idea_id: int, n: int) -> dict:
    """The definition: every row of each ranking with P(top n), in Decide's default order."""
    out = {}
    for dim, stored in slices.items():
        ranked = P.sort_rows(with_top_n(slice_rows(stored), n=n), sort=P.DEFAULT_SORT)
        mine = next(r for r in ranked if r["idea_id"] == idea_id)
        out[dim] = {**mine, "of": len(ranked)}
    return out


def entries(standing: dict) -> dict:
    return {e["dimension"]: e for e in [standing["overall"], *standing["dimensions"]]}


def tied(slices: dict) -> dict:
    """The slices with every idea's lower bound and estimate made equal in pairs, and in
    fours their titles too: the order then rests on the titles, then the ids (the ties' rule;
    the titles run against the ids)."""
    slices = copy.deepcopy(slices)
    for stored in slices.values():
        n = len(stored["idea_id"])
        for key in ("low", "estimate"):
            stored[key] = [stored[key][j - j % 4] for j in range(n)]
        stored["title"] = [f"Title {(n - j) // 2:05d}" for j in range(n)]
    return slices


@pytest.mark.parametrize("shape", ["stored", "ties", "rows"])
@pytest.mark.parametrize("n", [1, 3, 1000])
def test_each_ideas_standing_is_its_row_on_decides_full_board(decided, shape, n):
    slices = snapshot_domain_slices(decided, domain="nlp")
    if shape == "ties":
        slices = tied(slices)
    elif shape == "rows":  # a snapshot stored before slices were columns
        slices = {dim: slice_rows(stored) for dim, stored in slices.items()}
    labels = ratings.dimension_labels()
    ids = [r["idea_id"] for r in slice_rows(slices[ALL])]
    assert len(ids) > 5
    for idea_id in ids:
        standing = P.idea_standing(slices, idea_id=idea_id, labels=labels, shortlist_n=n)
        shown = entries(standing)
        expected = as_decide_shows_it(slices, idea_id, n)
        assert set(shown) == set(expected)
        for dim, row in expected.items():
            got = shown[dim]
            assert {k: got[k] for k in row} == row  # rank, of, p_top_n and every field
            assert got["shortlist_n"] == n


def test_an_idea_the_snapshot_does_not_rank_has_no_standing(decided):
    slices = snapshot_domain_slices(decided, domain="nlp")
    assert P.idea_standing(slices, idea_id=-1, labels={}, shortlist_n=3) is None
