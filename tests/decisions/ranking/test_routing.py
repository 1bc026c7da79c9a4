"""Routing the next reads: caps, minimum reads, the random share and the model's picks."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from apps.decisions.ranking import routing
from apps.decisions.ranking.cut_value import cut_value
from apps.decisions.ranking.routing import (
    FROM_MODEL,
    MIN_READS,
    RANDOM,
    IdeaState,
    Policy,
    next_read_var,
    prior_vars,
    route,
)


def ideas(n: int = 20, reads: int = 2) -> dict[int, IdeaState]:
    """Twenty ideas of one domain spread from -2 to +2, all read twice, sd 0.3."""
    return {i: IdeaState("x", -2 + 4 * i / (n - 1), 0.3, reads) for i in range(n)}


def all_pairs(reviewers, idea_ids):
    return [(r, i) for r in reviewers for i in idea_ids]


def test_a_reviewer_at_the_cap_gets_nothing_and_the_others_no_more_than_their_room():
    out = route(
        ideas=ideas(),
        candidates=all_pairs([1, 2, 3], range(20)),
        open_load={1: 10, 2: 8},
        one_read_var=0.1,
        policy=Policy(cap=10, per_batch=5, random_share=0, per_idea=3, min_reads=0),
    )
    per = Counter(s.reviewer_id for s in out)
    assert per[1] == 0 and per[2] == 2 and per[3] == 5


def test_ideas_below_the_minimum_of_human_reads_come_first_whatever_the_model_thinks():
    state = ideas()
    # Idea 0 is the weakest and safely out of the shortlist, but nobody has read it.
    state[0] = IdeaState("x", -2.0, 0.3, 0)
    out = route(
        ideas=state,
        candidates=all_pairs([1, 2], range(20)),
        open_load={},
        one_read_var=0.1,
        policy=Policy(per_batch=1, random_share=0, min_reads=1),
    )
    assert [(s.idea_id, s.kind) for s in out if s.kind == MIN_READS] == [(0, MIN_READS)]
    assert "0 human reads" in next(s.reason for s in out if s.kind == MIN_READS)


def test_the_random_share_of_each_reviewers_picks_is_kept():
    out = route(
        ideas=ideas(40),
        candidates=all_pairs([1, 2, 3, 4], range(40)),
        open_load={},
        one_read_var=0.1,
        policy=Policy(per_batch=5, random_share=0.4, per_idea=1, min_reads=0),
        seed=3,
    )
    kinds = Counter((s.reviewer_id, s.kind) for s in out)
    for r in (1, 2, 3, 4):
        assert kinds[(r, RANDOM)] == 2 and kinds[(r, FROM_MODEL)] == 3
    assert all("random" in s.reason for s in out if s.kind == RANDOM)


def test_the_model_picks_ideas_near_the_cut_and_says_so():
    out = route(
        ideas=ideas(),
        candidates=all_pairs([1], range(20)),
        open_load={},
        one_read_var=0.1,
        policy=Policy(per_batch=2, random_share=0, min_reads=0, share=0.1),
    )
    # The cut of twenty ideas at 10 % lies between the 2nd and 3rd best (ideas 18 and 17).
    assert {s.idea_id for s in out} == {17, 18}
    assert all("can decide whether this idea makes the shortlist" in s.reason for s in out)


def test_a_reviewer_whose_judge_is_unsure_is_preferred_for_the_same_idea():
    out = route(
        ideas=ideas(),
        candidates=all_pairs([1, 2], [18]),
        open_load={},
        confidence={(1, 18): 95.0, (2, 18): 20.0},
        one_read_var=0.1,
        policy=Policy(per_batch=1, random_share=0, min_reads=0, per_idea=1),
    )
    assert [(s.reviewer_id, s.idea_id) for s in out] == [(2, 18)]
    assert "Your judge is unsure" in out[0].reason


def test_the_pick_is_the_quantity_its_reason_quotes_the_value_of_a_read_at_the_cut():
    # Issue 25: picks used to be chosen by the policy's top share while the reasons quoted
    # P(top N) for the domain's saved shortlist size. Now the value of a pick is the expected
    # reduction of the chance that the idea sits on the wrong side of the cut at N, computed
    # from the very P(top N) its reason quotes.
    states = {
        i: IdeaState("x", 0.0, 0.3, 2, p_top=p, top_n=3)
        for i, p in enumerate([0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98, 0.5])
    }
    states[7] = IdeaState("x", 0.0, 0.15, 8, p_top=0.5, top_n=3)  # at the cut, narrow already
    states[8] = IdeaState("x", 0.0, 1.0, 0, p_top=0.01, top_n=3)  # nobody read it: the prior
    out = route(
        ideas=states,
        candidates=all_pairs([1], range(8)),
        open_load={},
        one_read_var=0.1,
        policy=Policy(per_batch=8, random_share=0, min_reads=0, share=0.5),
    )
    priors = prior_vars(states)["x"]
    for s in out:
        st = states[s.idea_id]
        expected = cut_value(st.p_top, st.sd, next_read_var(st, priors, 0.1))
        assert s.value == pytest.approx(expected)
        assert f"P(top 3) {st.p_top:.2f}" in s.reason
    order = [s.idea_id for s in out]
    value = {s.idea_id: s.value for s in out}
    # Nearest the cut first, the same on both sides of it; far from it last.
    assert order[0] == 3 and set(order[-2:]) == {0, 6}
    assert value[2] == pytest.approx(value[4]) and value[1] == pytest.approx(value[5])
    assert value[3] > value[2] > value[1] > value[0]
    values = [s.value for s in out]
    assert values == sorted(values, reverse=True)
    # Of two ideas at P(top 3) 0.5, the one that eight reads left narrow gains less from a
    # ninth than the twice-read one from a third.
    assert order.index(3) < order.index(7)
    # The value is 0 for an idea the board places surely in or out, and never negative.
    assert cut_value(0.0, 0.3, 0.1) == 0.0 and cut_value(1.0, 0.3, 0.1) == 0.0
    assert all(cut_value(p, 0.3, 0.1) >= 0 for p in np.linspace(0, 1, 21))


def test_an_idea_whose_readers_repeat_one_another_is_worth_less_than_its_interval_suggests():
    # Two ideas with the same board figures at the cut: one read once, one read six times by
    # readers whose shared coarse grade left it as wide (the board's interval stops at what
    # their grades resolve). One more read narrows the first far more.
    states = ideas()
    states[18] = IdeaState("x", 1.6, 0.5, 1, p_top=0.5, top_n=2)
    states[17] = IdeaState("x", 1.6, 0.5, 6, p_top=0.5, top_n=2)
    states[0] = IdeaState("x", -2.0, 1.0, 0)  # an unread idea: the domain's prior width
    out = route(
        ideas=states,
        candidates=all_pairs([1], [17, 18]),
        open_load={},
        one_read_var=0.3,
        policy=Policy(per_batch=1, random_share=0, min_reads=0),
    )
    assert [(s.idea_id, s.kind) for s in out] == [(18, FROM_MODEL)]


def test_the_default_policy_reads_every_idea_once_and_keeps_a_tenth_random():
    policy = Policy()
    assert policy.min_reads == 1 and policy.random_share == 0.1
    assert round(policy.random_share * policy.per_batch) == 1


def test_only_an_idea_the_board_places_near_the_cut_is_told_its_read_decides():
    # Idea 18 sits near the cut on the board; idea 5 at P(top) 0.00 there, though its sd on
    # people's reads alone is wide (most of its evidence is the judges' predictions).
    states = ideas()
    states[18] = IdeaState("x", 1.6, 0.3, 2, p_top=0.41, focus="Market size")
    states[5] = IdeaState("x", 1.0, 0.3, 1, judge_share=0.95, p_top=0.0, focus="Need validity")
    states[0] = IdeaState("x", -2.0, 3.0, 0)
    out = route(
        ideas=states,
        candidates=all_pairs([1, 2, 3], [18, 5, 2]),
        open_load={},
        one_read_var=0.1,
        policy=Policy(per_batch=3, random_share=0, min_reads=0, per_idea=1, share=0.1),
    )
    why = {s.idea_id: s.reason for s in out}
    assert why[18].startswith("Near the shortlist's cut on the board (P(top 10 %) 0.41)")
    assert "your read on Market size can decide" in why[18]
    assert "can decide" not in why[5] and "near" not in why[5].lower()
    assert "safely out of the shortlist (P(top 10 %) 0.00)" in why[5]
    assert "on people's reads only (1 human read)" in why[5] and "on Need validity" in why[5]
    assert why[2].startswith("Unlikely to change the shortlist (P(top 10 %) 0.00 on the board)")


def test_the_reason_never_claims_the_cut_outside_the_boards_band():
    from apps.decisions.ranking.routing import NEAR_CUT_HIGH, NEAR_CUT_LOW

    states = {
        i: IdeaState("x", -2 + 4 * i / 29, 0.2 + (i % 5) / 4, i % 3, p_top=p, focus="Novelty")
        for i, p in enumerate([0.0, 0.01, 0.049, 0.05, 0.3, 0.5, 0.95, 0.951, 0.99, 1.0] * 3)
    }
    out = route(
        ideas=states,
        candidates=all_pairs(range(1, 7), range(30)),
        open_load={},
        one_read_var=0.1,
        policy=Policy(per_batch=5, random_share=0, min_reads=0, per_idea=1),
    )
    assert len(out) == 30
    for s in out:
        p = states[s.idea_id].p_top
        assert ("can decide whether" in s.reason) == (NEAR_CUT_LOW <= p <= NEAR_CUT_HIGH)
        assert f"%) {p:.2f}" in s.reason and "on Novelty" in s.reason


@pytest.mark.parametrize("slots", [1, 3, 50])
def test_the_partial_sort_gives_the_full_sorts_order_with_ties_and_missing_values(slots):
    rng = np.random.default_rng(slots)
    n = 400
    value = rng.choice([0.1, 0.2, 0.3, np.nan], size=n)  # many ties, and NaN
    narrowing = rng.choice([0.0, 0.5], size=n)
    reviewer, idea = rng.integers(0, 5, size=n), rng.permutation(n)
    keys = (idea, reviewer, -narrowing, -value)
    rows = np.flatnonzero(rng.random(n) < 0.8)
    want = rows[np.lexsort(tuple(k[rows] for k in keys))].tolist()
    # More rows than the first part holds, so both parts are sorted and joined.
    assert len(rows) > routing.SORTED_PER_SLOT * slots or slots == 50
    assert list(routing._best_first(rows, keys, slots)) == want


def test_a_round_on_columns_is_the_round_on_one_state_per_idea():
    # The recompute hands route its ideas as columns (IdeaStates), in any order of the ideas;
    # a mapping of IdeaState gives the same round, reasons included.
    rng = np.random.default_rng(4)
    states = {
        int(i): IdeaState(
            "ab"[i % 2],
            float(rng.normal()),
            float(rng.uniform(0.1, 1.0)),
            int(rng.integers(0, 4)),
            float(rng.uniform(0, 0.6)),
            p_top=None if i % 5 == 0 else float(rng.uniform()),
            top_n=None if i % 7 == 0 else 3,
            focus="Market size" if i % 3 else "",
        )
        for i in range(40)
    }
    order = [int(i) for i in rng.permutation(list(states))]
    shuffled = [states[i] for i in order]
    columns = routing.IdeaStates.from_columns(
        idea_id=order,
        domain=[st.domain for st in shuffled],
        estimate=[st.estimate for st in shuffled],
        sd=[st.sd for st in shuffled],
        n_reads=[st.n_reads for st in shuffled],
        judge_share=[st.judge_share for st in shuffled],
        p_top=[np.nan if st.p_top is None else st.p_top for st in shuffled],
        top_n=[st.top_n or 0 for st in shuffled],
        focus=[st.focus for st in shuffled],
    )
    assert [columns.state(j) for j in range(len(columns))] == [states[i] for i in sorted(states)]
    kwargs = {
        "candidates": all_pairs([1, 2, 3], range(40)),
        "open_load": {2: 15},
        "one_read_var": 0.2,
        "policy": Policy(per_batch=6, random_share=0.2, min_reads=1),
    }
    by_state = route(ideas=states, **kwargs)
    assert len(by_state) == 6 + 5 + 6
    assert route(ideas=columns, **kwargs) == by_state
    assert routing.one_read_var(columns) == routing.one_read_var(states)
    assert routing.domain_cuts(columns, 0.1) == routing.domain_cuts(states, 0.1)
