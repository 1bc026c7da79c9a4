"""The decision snapshot and routing services against the database."""

from __future__ import annotations

import pytest

from apps.accounts.models import User
from apps.catalog.models import Idea
from apps.core.errors import PermissionDenied
from apps.decisions.models import DecisionSlice, DecisionSnapshot, RoutingSuggestion
from apps.decisions.ranking.rows import slice_rows
from apps.decisions.services import POLICY, domain_routing_set, suggestions_accept
from apps.screening.models import Assignment
from tests.decisions.conftest import compute_decisions

pytestmark = pytest.mark.django_db


def test_the_snapshot_stores_one_ranking_per_domain_and_dimension_with_every_idea(decided):
    assert decided.status == DecisionSnapshot.Status.DONE, decided.error
    keys = set(DecisionSlice.objects.filter(snapshot=decided).values_list("domain", "dimension"))
    assert ("nlp", "__all__") in keys and ("materials", "innovativeness") in keys
    (overall,) = DecisionSlice.objects.filter(
        snapshot=decided, domain="nlp", dimension="__all__", evidence="all"
    )
    rows = slice_rows(overall.rows)
    assert len(rows) == Idea.objects.filter(patent__domain__key="nlp").count()
    row = rows[0]
    assert row["low"] <= row["estimate"] <= row["high"]
    assert row["n_reviewers"] == 6 and row["n_predicted"] == 0 and row["judge_share"] == 0


def test_the_snapshot_also_stores_the_board_fitted_on_peoples_reads_only(decided):
    people = DecisionSlice.objects.filter(snapshot=decided, evidence="people")
    full = DecisionSlice.objects.filter(snapshot=decided, evidence="all")
    assert set(people.values_list("domain", "dimension")) == set(
        full.values_list("domain", "dimension")
    )
    # Stored as the people's figures alone; the selector merges them with the full rows.
    (overall,) = people.filter(domain="nlp", dimension="__all__")
    assert set(overall.rows) == {
        "domain",
        "dimension",
        "idea_id",
        "estimate",
        "low",
        "high",
        "p_top",
    }
    from apps.decisions.selectors import snapshot_rows

    merged = snapshot_rows(decided, domain="nlp", dimension="__all__", evidence="people")
    assert len(merged) == len(overall.rows["idea_id"])
    assert all(r["judge_share"] == 0 and not r["preds"] and r["title"] for r in merged)
    assert "people" in decided.result and "nlp" in decided.result["people"]["domains"]
    dark = decided.result["domains"]["nlp"]
    assert {"unread", "expected_top_unread", "settle_reads", "text"} <= set(dark)


def test_slices_are_stored_as_columns_and_read_back_as_the_rows_they_hold(decided):
    from apps.decisions.ranking.rows import slice_idea
    from apps.decisions.selectors import snapshot_domain_slices, snapshot_rows

    stored = DecisionSlice.objects.get(
        snapshot=decided, domain="nlp", dimension="innovativeness", evidence="all"
    )
    assert isinstance(stored.rows, dict) and len(stored.rows["idea_id"]) > 1
    rows = snapshot_rows(decided, domain="nlp", dimension="innovativeness")
    assert [r["idea_id"] for r in rows] == stored.rows["idea_id"]
    read = [r for r in rows if r["n_reviewers"]]
    assert read and all(len(r["scores"]) == r["n_reviewers"] for r in read)
    assert all(
        isinstance(c[0], str) and c[2] in {"scored", "gated"} for r in read for c in r["scores"]
    )
    one_by_one = snapshot_domain_slices(decided, domain="nlp")["innovativeness"]
    assert [slice_idea(one_by_one, r["idea_id"]) for r in rows] == rows
    assert slice_idea(one_by_one, -1) is None


def test_a_snapshot_stored_before_slices_were_columns_is_still_read(decided):
    """Slices stored as lists of row dicts (snapshots, backups and kept domains from before)
    are read as they are."""
    from apps.decisions.selectors import snapshot_overall_slices, snapshot_rows

    rows = snapshot_rows(decided, domain="nlp", dimension="__all__")
    people = snapshot_rows(decided, domain="nlp", dimension="__all__", evidence="people")
    for evidence, legacy in [
        ("all", rows),
        (
            "people",
            [
                {
                    k: r[k]
                    for k in ("domain", "dimension", "idea_id", "estimate", "low", "high", "p_top")
                }
                for r in people
            ],
        ),
    ]:
        DecisionSlice.objects.filter(
            snapshot=decided, domain="nlp", dimension="__all__", evidence=evidence
        ).update(rows=legacy)
    assert snapshot_rows(decided, domain="nlp", dimension="__all__") == rows
    assert snapshot_rows(decided, domain="nlp", dimension="__all__", evidence="people") == people
    (overall,) = snapshot_overall_slices(decided, domains=["nlp"])
    assert slice_rows(overall) == rows


def test_ideas_a_majority_gated_out_rank_in_the_bottom_half(decided):
    (overall,) = DecisionSlice.objects.filter(
        snapshot=decided, domain="nlp", dimension="__all__", evidence="all"
    )
    rows = sorted(slice_rows(overall.rows), key=lambda r: -r["estimate"])
    gated = [n for n, r in enumerate(rows) if 2 * r["n_gated"] > r["n_reviewers"]]
    assert gated, "the planted data gate some ideas out for most reviewers"
    assert min(gated) >= len(rows) // 2


def test_a_second_run_of_the_same_snapshot_changes_nothing(decided):
    before = DecisionSlice.objects.filter(snapshot=decided).count()
    from apps.decisions.services import decisions_recompute

    again = decisions_recompute(snapshot_id=decided.id)
    assert again.status == DecisionSnapshot.Status.DONE
    assert DecisionSlice.objects.filter(snapshot=decided).count() == before


def _stored(snapshot: DecisionSnapshot) -> dict[tuple[str, str, str], list]:
    return {
        (s.domain, s.dimension, s.evidence): s.rows
        for s in DecisionSlice.objects.filter(snapshot=snapshot)
    }


def test_after_one_rating_changes_only_its_domain_is_fitted_again_as_a_full_recompute_would(
    decided,
):
    from apps.screening.models import Rating

    rating = (
        Rating.objects.filter(status="scored", idea__patent__domain__key="nlp")
        .select_related("dimension")
        .order_by("id")
        .first()
    )
    dim = rating.dimension
    grades = [g for g in range(dim.scale_min, dim.scale_max + 1) if g not in dim.categories]
    rating.score = grades[(grades.index(rating.score) + 1) % len(grades)]
    rating.save(update_fields=["score"])

    again = compute_decisions()
    assert again.status == DecisionSnapshot.Status.DONE, again.error
    assert again.result["kept"] == ["materials"]
    kept_rows, first_rows = _stored(again), _stored(decided)
    assert set(kept_rows) == set(first_rows)
    for key, rows in kept_rows.items():
        # The kept domain's slices are the first board's; the changed one's are new.
        assert (rows == first_rows[key]) == (key[0] == "materials"), key
    # The same as a recompute with no earlier board to keep anything from.
    result = {k: v for k, v in again.result.items() if k != "kept"}
    DecisionSnapshot.objects.all().delete()
    full = compute_decisions()
    assert full.result["kept"] == []
    assert _stored(full) == kept_rows
    assert {k: v for k, v in full.result.items() if k != "kept"} == result


def test_every_idea_is_read_by_all_six_so_routing_has_nothing_to_suggest(decided):
    assert not RoutingSuggestion.objects.exists()


@pytest.fixture
def newcomer(domain):
    """A new reviewer of NLP who has read nothing: every NLP idea is a candidate for them."""
    user = User.objects.create_user(username="newcomer", password="x", role=User.Role.REVIEWER)
    from apps.accounts.models import ReviewerProfile

    ReviewerProfile.objects.create(user=user).domains.add(domain)
    return user


def test_suggestions_respect_the_cap_and_the_random_share_and_say_why(planted, newcomer):
    compute_decisions()
    mine = list(RoutingSuggestion.objects.filter(reviewer=newcomer))
    assert len(mine) == min(POLICY.per_batch, POLICY.cap)
    n_random = sum(s.kind == RoutingSuggestion.Kind.RANDOM for s in mine)
    assert n_random == round(POLICY.random_share * len(mine))
    assert all(s.reason for s in mine)


def test_routing_never_suggests_an_idea_the_reviewer_rated_or_declined(planted, newcomer):
    """The rated pairs come from the recompute's rating frame (not read again): a read and a
    decline (the reviewer recused themselves) both take the idea off their candidates."""
    from apps.screening.models import Rating
    from apps.screening.selectors import rubric_default

    first = rubric_default().dimensions.order_by("position").first()
    ideas = list(Idea.objects.filter(patent__domain__key="nlp").order_by("id"))
    declined, read = ideas[:10], ideas[10:20]
    Rating.objects.bulk_create(
        [
            Rating(reviewer=newcomer, idea=i, dimension=first, status=Rating.Status.DECLINED)
            for i in declined
        ]
        + [
            Rating(reviewer=newcomer, idea=i, dimension=first, status="scored", score=3)
            for i in read
        ]
    )
    compute_decisions()
    suggested = set(
        RoutingSuggestion.objects.filter(reviewer=newcomer).values_list("idea_id", flat=True)
    )
    assert suggested, "the newcomer still has unread NLP ideas to be routed"
    assert not suggested & {i.id for i in declined + read}


def test_an_admin_accepts_suggestions_and_the_reviewer_sees_why_in_their_queue(
    planted, newcomer, admin, client
):
    compute_decisions()
    ids = list(RoutingSuggestion.objects.filter(reviewer=newcomer).values_list("id", flat=True))
    assert suggestions_accept(actor=admin, suggestion_ids=ids) == len(ids)
    assert suggestions_accept(actor=admin, suggestion_ids=ids) == 0  # no longer open
    routed = Assignment.objects.filter(reviewer=newcomer)
    assert routed.count() == len(ids) and all(a.reason for a in routed)
    client.force_login(newcomer)
    page = client.get("/screening/").content.decode()
    from html import escape

    assert "Why you:" in page and escape(routed.first().reason.split(":")[0]) in page


def test_accepting_stops_at_the_reviewers_cap(planted, newcomer, admin, domain):
    for idea in Idea.objects.filter(patent__domain=domain)[: POLICY.cap - 1]:
        Assignment.objects.create(reviewer=newcomer, idea=idea)
    compute_decisions()
    ids = list(RoutingSuggestion.objects.filter(reviewer=newcomer).values_list("id", flat=True))
    assert len(ids) == 1  # the routing round already leaves room for one
    assert suggestions_accept(actor=admin, suggestion_ids=ids) == 1
    Assignment.objects.filter(reviewer=newcomer).update(status=Assignment.Status.PENDING)
    compute_decisions()
    assert not RoutingSuggestion.objects.filter(
        reviewer=newcomer, status=RoutingSuggestion.Status.OPEN
    ).exists()


def test_only_admins_accept_or_switch_routing(planted, newcomer, manager, domain):
    compute_decisions()
    ids = list(RoutingSuggestion.objects.values_list("id", flat=True))
    with pytest.raises(PermissionDenied):
        suggestions_accept(actor=manager, suggestion_ids=ids)
    with pytest.raises(PermissionDenied):
        domain_routing_set(actor=manager, domain=domain, automatic=True)


def test_automatic_routing_assigns_a_domains_suggestions_without_an_admin(
    planted, newcomer, admin, domain
):
    domain_routing_set(actor=admin, domain=domain, automatic=True)
    compute_decisions()
    assert Assignment.objects.filter(reviewer=newcomer).exclude(reason="").count() == min(
        POLICY.per_batch, POLICY.cap
    )
    assert not RoutingSuggestion.objects.filter(status=RoutingSuggestion.Status.OPEN).exists()


def test_routing_reasons_agree_with_the_boards_p_top_and_name_a_dimension(planted, newcomer):
    from apps.decisions.ranking.cut import with_top_n
    from apps.decisions.ranking.routing import NEAR_CUT_HIGH, NEAR_CUT_LOW
    from apps.screening.selectors.frame import dimension_labels

    snapshot = compute_decisions()
    (overall,) = DecisionSlice.objects.filter(
        snapshot=snapshot, domain="nlp", dimension="__all__", evidence="all"
    )
    # The reasons quote P(top N) for the domain's shortlist size, as Decide's cut shows it.
    p_top = {r["idea_id"]: r["p_top_n"] for r in with_top_n(slice_rows(overall.rows), n=10)}
    picks = list(
        RoutingSuggestion.objects.filter(reviewer=newcomer, kind=RoutingSuggestion.Kind.BOUNDARY)
    )
    assert picks
    labels = set(dimension_labels().values())
    for s in picks:
        p = p_top[s.idea_id]
        assert f"P(top 10) {p:.2f}" in s.reason, s.reason
        near = "can decide whether this idea makes the shortlist" in s.reason
        assert near == (NEAR_CUT_LOW <= p <= NEAR_CUT_HIGH), (p, s.reason)
        assert any(f"on {label}" in s.reason for label in labels), s.reason
    # The case: never "decides" for an idea the board puts at P(top) 0.00.
    assert not any("can decide" in s.reason for s in picks if round(p_top[s.idea_id], 2) == 0.0)
