"""The pure panel method, without Django or a server: personas, debate, aggregation, figures."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from apps.judges.engine.judgment import RubricDimension
from apps.panels.engine import debate
from apps.panels.engine.personas import (
    Evidence,
    PersonaDraft,
    merge_similar,
    parse_stakeholders,
)
from apps.panels.engine.study import study_figures, switch_counts

DIM = RubricDimension(
    key="innovativeness", name="Innovativeness", description="", scale_min=1, scale_max=5
)
DOC = (
    "Hospital buyers told us: we only pay for tools that cut charting time in half. "
    "Nurses said the screens must never add a click to a shift."
)


def test_extraction_keeps_only_quotes_that_occur_in_the_document():
    reply = json.dumps(
        {
            "stakeholders": [
                {
                    "name": "Hospital buyers",
                    "description": "Pay for time saved.",
                    "evidence": [
                        {
                            "dimension": "market_size",
                            "quote": "we only pay for tools that cut  CHARTING time",
                        },
                        {
                            "dimension": "innovativeness",
                            "quote": "a quote the model made up entirely",
                        },
                    ],
                },
                {
                    "name": "Regulators",
                    "evidence": [{"dimension": "market_size", "quote": "invented words here"}],
                },
            ]
        }
    )
    drafts = parse_stakeholders(
        reply,
        document_text=DOC,
        document="interviews",
        dimension_keys=["innovativeness", "market_size"],
    )
    assert [d.name for d in drafts] == ["Hospital buyers"]
    assert drafts[0].dimensions == ["market_size"]
    assert drafts[0].evidence == [
        Evidence("market_size", "we only pay for tools that cut CHARTING time", "interviews")
    ]


def test_similar_stakeholders_merge_with_their_evidence_united():
    a = PersonaDraft(
        "Hospital buyers", "Pay for time.", ["market_size"], [Evidence("market_size", "q1")]
    )
    b = PersonaDraft(
        "Buyers at the hospital",
        "Budget holders.",
        ["innovativeness"],
        [Evidence("innovativeness", "q2")],
    )
    c = PersonaDraft("Nurses", "Clicks.", ["need_validity"], [Evidence("need_validity", "q3")])
    merged = merge_similar([a, b, c], ["innovativeness", "need_validity", "market_size"])
    assert [m.name for m in merged] == ["Hospital buyers", "Nurses"]
    assert merged[0].dimensions == ["innovativeness", "market_size"]
    assert {e.quote for e in merged[0].evidence} == {"q1", "q2"}


def _ask(script):
    """An ask() whose reply is script(kind, member, round); records the calls."""
    calls = []

    def ask(kind, member, round_no, messages):
        calls.append((kind, member, round_no))
        return debate.TurnResult(score=script(kind, member, round_no), reason=f"r{member}")

    return ask, calls


MEMBERS = [debate.Member(1, "A", "a"), debate.Member(2, "B", "b"), debate.Member(3, "C", "c")]


def test_a_debate_stops_once_no_member_changes_its_score():
    # A starts at 1 and moves to 3 in round 1; after that nobody moves.
    ask, calls = _ask(lambda kind, m, r: 3 if (m != 1 or r >= 1) else 1)
    result = debate.run_debate(members=MEMBERS, dimension=DIM, item_text="x", max_rounds=4, ask=ask)
    assert result.stop_reason == debate.STOP_UNANIMOUS  # all agree after round 1
    ask, calls = _ask(lambda kind, m, r: {0: 2, 1: 1, 2: 3, 3: 3}[m])
    result = debate.run_debate(members=MEMBERS, dimension=DIM, item_text="x", max_rounds=4, ask=ask)
    assert result.stop_reason == debate.STOP_STABLE
    assert result.debate_rounds == 1
    assert [c[0] for c in calls].count(debate.REVISE) == 3


def test_a_debate_that_never_settles_stops_at_the_maximum_of_rounds():
    ask, calls = _ask(lambda kind, m, r: 1 + (m + r) % 2 * 2)
    result = debate.run_debate(members=MEMBERS, dimension=DIM, item_text="x", max_rounds=3, ask=ask)
    assert result.stop_reason == debate.STOP_MAX_ROUNDS
    assert result.debate_rounds == 3
    assert len(calls) == debate.planned_calls(members=3, max_rounds=3)


def test_the_panel_score_is_the_mean_of_each_members_latest_valid_score():
    # Member 3's debate reply is unusable: it keeps its round-0 score.
    def script(kind, m, r):
        if kind == debate.REVISE and m == 3:
            return None
        return {1: 1, 2: 4, 3: 5}[m] if r == 0 else {1: 2, 2: 4}[m]

    ask, _ = _ask(lambda k, m, r: 3 if m == 0 else script(k, m, r))
    result = debate.run_debate(members=MEMBERS, dimension=DIM, item_text="x", max_rounds=1, ask=ask)
    assert result.before == (1 + 4 + 5) / 3
    assert result.after == (2 + 4 + 5) / 3
    assert debate.aggregate({}) is None


def test_the_coordinator_names_the_two_members_furthest_apart():
    note = debate.coordinator_note(
        {1: 2, 2: 5, 3: 1}, {2: "bold", 3: "dull"}, {1: "A", 2: "B", 3: "C"}
    )
    assert "C (1: dull)" in note and "B (5: bold)" in note


def _frames(after_of, rounds_of):
    people = {10: 1.0, 11: 2.0, 12: 3.0, 13: 4.0, 14: 5.0}
    humans = pd.DataFrame(
        [(i, "innovativeness", r, s + d) for i, s in people.items() for r, d in ((1, 0), (2, 0))],
        columns=["idea", "dimension", "reviewer", "score"],
    )
    debates = pd.DataFrame(
        [(i, i, "innovativeness", 3.0, 3.0, after_of(s)) for i, s in people.items()],
        columns=["debate", "idea", "dimension", "single", "before", "after"],
    )
    members = pd.DataFrame(columns=["debate", "idea", "dimension", "member", "before", "after"])
    rounds = {i: rounds_of(i) for i in people}
    return {
        "humans": humans,
        "debates": debates,
        "members": members,
        "persona_reviewer": {},
        "rounds": rounds,
    }


def test_a_panel_that_copies_the_majority_is_detected():
    # Member 3 is alone on 1 against two 4s, and takes 4 in the next round, in every debate.
    copying = study_figures(
        **_frames(lambda s: s, lambda i: [{1: 4, 2: 4, 3: 1}, {1: 4, 2: 4, 3: 4}])
    )
    fig = copying["innovativeness"]
    assert fig["switch_to_majority_rate"] == 1.0
    assert fig["minority_positions"] == 5
    stubborn = study_figures(
        **_frames(lambda s: s, lambda i: [{1: 4, 2: 4, 3: 1}, {1: 4, 2: 4, 3: 1}])
    )
    assert stubborn["innovativeness"]["switch_to_majority_rate"] == 0.0
    assert switch_counts([{1: 2, 2: 3}]) == (0, 0)  # a tie has no majority


def test_debate_that_lands_on_the_reviewers_mean_is_reported_as_moving_toward_them():
    fig = study_figures(**_frames(lambda s: s, lambda i: []))["innovativeness"]
    assert fig["alpha_after"] == 1.0  # after debate the panel equals the reviewers' mean
    assert fig["alpha_single"] is not None and fig["alpha_single"] < 0.5
    assert fig["mae_before"] == 1.2 and fig["mae_after"] == 0.0
    assert fig["debate_effect"]["direction"] == "toward"
    assert "toward the reviewers" in fig["debate_effect"]["sentence"]
    away = study_figures(**_frames(lambda s: 6.0 - s, lambda i: []))["innovativeness"]
    assert away["debate_effect"]["direction"] == "away"
    assert np.isclose(away["alpha_reviewers"], 1.0)
