"""Routing the next reads: which unread ideas each reviewer should read next, and why.

The aim is the shortlist (the N best of each domain on the overall ranking, N the domain's
saved shortlist size), so a read is worth what it can change there, in the quantity its reason
quotes: the board's P(top N) of the idea, P. The idea is on the wrong side of the cut with
probability min(P, 1 - P); one more read narrows its sd to sd' (1 / sd'^2 = 1 / sd^2 +
1 / v, v the variance one read corresponds to, ``next_read_var``) and moves its mean by a
draw of sd sqrt(sd^2 - sd'^2), after which P becomes P'. The value of the read is the
expected reduction of that probability (``cut_value``):

    value = (min(P, 1 - P) - E[min(P', 1 - P')]) * judge
    judge = 1.5 - confidence / 100          # this reviewer's judge unsure -> worth more

(E[P'] = P, so the reduction is never negative; it is largest for an idea at P(top N) near 0.5
whose interval one read narrows much, and 0 for an idea the board places surely in or out.)
``judge`` is 1 where this reviewer has no prediction for the idea. Among picks of equal value
(surely in or out: 0) the one whose interval one more read narrows most comes first (the
reason says so: it fills the queue). The rules around the value (``Policy``: the one home,
used by the product's recompute and by bench/bench_decision.py):

1. Minimum human reads: ideas with fewer than ``min_reads`` reads come first (fewest first),
   whatever their value; a ranking resting on no person is not defensible.
2. Random share: ``round(random_share * slots)`` of each reviewer's picks are drawn uniformly
   from their eligible ideas, so the model is also fed ideas it has not singled out (otherwise
   an idea it wrongly believes safe is never read again).
3. Caps: a reviewer gets at most ``cap - open`` picks (open: their pending assignments) and at
   most ``per_batch``; an idea gets at most ``per_idea`` new reads per batch.
Candidates are pairs (reviewer, idea) the caller deems eligible: the reviewer's domain, never
read nor assigned to them.

The reason a model's pick gives (``_reason``) is worded on the board the manager sees: the
idea's P(top) there (``IdeaState.p_top``, the board's own figure, which counts the judges'
predictions) decides what it may claim. Only an idea the board places near the cut
(NEAR_CUT_LOW <= P(top) <= NEAR_CUT_HIGH) is told "your read can decide whether it makes the
shortlist". An idea the board places safely in or out, whose evidence is partly the judges'
and whose place is open on people's reads only, says so in those words; any other pick is
"unlikely to change the shortlist" and says it fills the reviewer's queue. Every model's pick
names the dimension where one more read narrows the idea most (``IdeaState.focus``); a first
read (MIN_READS) covers every dimension and names none.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import erfc

from apps.decisions.ranking.cut_value import cut_values

MIN_READS, FROM_MODEL, RANDOM = "min_reads", "boundary", "random"
# The board's P(top) band where "near the cut" may be said (shown with two decimals: an idea at
# 0.00 or 1.00 is never near the cut); below the band's closeness on people's reads, a pick
# only fills the reviewer's queue.
NEAR_CUT_LOW, NEAR_CUT_HIGH = 0.05, 0.95
OPEN_ON_PEOPLE = 0.05
# "On people's reads only" is said only where the judges' predictions carry at least this share
# of the idea's evidence: otherwise they are not what makes the board sure.
JUDGES_MATTER = 0.05


@dataclass(frozen=True)
class Policy:
    # One human read per idea before the model's picks: every idea is seen by a person once
    # (no idea is ranked on predictions alone), but a second read is spent only where the
    # model says it can move the shortlist; forcing two reads spends most of a 2-3 read budget
    # on ideas far from the cut (bench/bench_decision.py: see docs/decide.md).
    min_reads: int = 1
    cap: int = 20  # open (pending) assignments a reviewer may hold, routed ones included
    # Picks per reviewer per routing round: 10, so a random share of 10 % is one pick each.
    per_batch: int = 10
    per_idea: int = 1  # new reads of one idea per round
    # Exploration: a tenth of the picks are random so the model is not fed only what it
    # believes; a fifth spent a fifth of every budget on it for no measured gain.
    random_share: float = 0.1
    share: float = 0.10  # the shortlist: top share of each domain


@dataclass(frozen=True)
class IdeaState:
    domain: str
    estimate: float
    sd: float
    n_reads: int
    # Share of the estimate's evidence (precision) that comes from the judges' predictions.
    judge_share: float = 0.0
    # The board's P(top) of the idea (None: derived from estimate and sd, as the board): of the
    # domain's top ``top_n`` ideas, the shortlist size Decide cuts at, when given; else of the
    # policy's top share.
    p_top: float | None = None
    top_n: int | None = None
    # The dimension one more read narrows most, as the page names it ("" when unknown).
    focus: str = ""


@dataclass(frozen=True)
class Suggestion:
    reviewer_id: int
    idea_id: int
    kind: str  # MIN_READS, FROM_MODEL or RANDOM
    value: float
    reason: str


@dataclass(frozen=True)
class IdeaStates:
    """Every idea's ``IdeaState`` as columns, sorted by idea id: what ``route`` reads. At a
    million ratings a round weighs 55,000 ideas, and one object per idea, built and read
    field by field, was a tenth of the decision recompute. ``p_top`` NaN and ``top_n`` 0 stand
    for an ``IdeaState``'s None."""

    idea_id: np.ndarray  # int64, sorted
    domain: np.ndarray  # object
    estimate: np.ndarray
    sd: np.ndarray
    n_reads: np.ndarray  # int64
    judge_share: np.ndarray
    p_top: np.ndarray
    top_n: np.ndarray  # int64
    focus: np.ndarray  # object

    @classmethod
    def of(cls, ideas: Mapping[int, IdeaState] | IdeaStates) -> IdeaStates:
        if isinstance(ideas, IdeaStates):
            return ideas
        states = list(ideas.values())
        return cls.from_columns(
            idea_id=np.fromiter(ideas.keys(), np.int64, count=len(states)),
            domain=[st.domain for st in states],
            estimate=[st.estimate for st in states],
            sd=[st.sd for st in states],
            n_reads=[st.n_reads for st in states],
            judge_share=[st.judge_share for st in states],
            p_top=[np.nan if st.p_top is None else st.p_top for st in states],
            top_n=[st.top_n or 0 for st in states],
            focus=[st.focus for st in states],
        )

    @classmethod
    def from_columns(cls, *, idea_id: Any, **columns: Any) -> IdeaStates:
        """The states from one value per idea in each column, in any order of the ideas."""
        ids = np.asarray(idea_id, dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        types = {"domain": object, "n_reads": np.int64, "top_n": np.int64, "focus": object}
        return cls(
            idea_id=ids[order],
            **{
                name: np.asarray(values, dtype=types.get(name, float))[order]
                for name, values in columns.items()
            },
        )

    def __len__(self) -> int:
        return len(self.idea_id)

    def state(self, j: int) -> IdeaState:
        """The ``IdeaState`` of the idea at position ``j``."""
        p_top, top_n = float(self.p_top[j]), int(self.top_n[j])
        return IdeaState(
            str(self.domain[j]),
            float(self.estimate[j]),
            float(self.sd[j]),
            int(self.n_reads[j]),
            float(self.judge_share[j]),
            p_top=None if math.isnan(p_top) else p_top,
            top_n=top_n or None,
            focus=str(self.focus[j]),
        )

    @cached_property
    def by_domain(self) -> list[tuple[str, np.ndarray]]:
        """Each domain with the positions of its ideas (in id order); grouped once, as the
        cut, the priors and the round all read it."""
        keys, code = np.unique(self.domain.astype(str), return_inverse=True)
        order = np.argsort(code, kind="stable")
        bounds = np.searchsorted(code[order], np.arange(len(keys) + 1))
        return [(str(k), order[bounds[j] : bounds[j + 1]]) for j, k in enumerate(keys)]


def domain_cuts(ideas: Mapping[int, IdeaState] | IdeaStates, share: float) -> dict[str, float]:
    """The estimate halfway between the last idea in the shortlist and the first one out."""
    states = IdeaStates.of(ideas)
    cuts = {}
    for dom, at in states.by_domain:
        e = np.sort(states.estimate[at])[::-1]
        k = max(1, math.ceil(share * len(e)))
        cuts[dom] = float(e[k - 1] if k >= len(e) else (e[k - 1] + e[k]) / 2)
    return cuts


def one_read_var(states: Mapping[int, IdeaState] | IdeaStates) -> float:
    """The variance of an idea read once: what one more read can add, in the model's units."""
    columns = IdeaStates.of(states)
    once = columns.sd[columns.n_reads == 1] ** 2
    if len(once):
        return float(np.median(once))
    if not len(columns):
        return 1.0
    return float(np.median(columns.sd**2) / 2)


def pair_confidence(predictions: pd.DataFrame) -> dict[tuple[int, int], float]:
    """Each (reviewer, idea)'s judge confidence: the mean over the dimensions predicted."""
    if predictions is None or not len(predictions):
        return {}
    conf = pd.to_numeric(predictions["confidence"], errors="coerce")
    agg = predictions.assign(c=conf).groupby(["reviewer_id", "idea_id"])["c"].mean()
    return {(int(r), int(i)): float(c) for (r, i), c in agg.items() if pd.notna(c)}


def prior_vars(ideas: Mapping[int, IdeaState] | IdeaStates) -> dict[str, float]:
    """Each domain's prior variance: the widest interval (an idea nobody read sits there)."""
    states = IdeaStates.of(ideas)
    return {dom: float(np.max(states.sd[at] ** 2)) for dom, at in states.by_domain}


def human_sds(sd: np.ndarray, judge_share: np.ndarray, prior_var: np.ndarray) -> np.ndarray:
    """Each idea's sd counting people's evidence only.

    The board gives the panel judge's predictions no weight (they echo the idea's reads);
    what ``judge_share`` counts is the domain text model and judges that read the idea. A
    read by a person narrows what people know; the text model's part of the interval is not
    what one more read replaces, so routing values reads against people's evidence alone.
    """
    sd = np.maximum(sd, 1e-9)
    prior = np.where(prior_var > 0, prior_var, np.inf)
    data = 1.0 / sd**2 - 1.0 / prior
    people = np.sqrt(1.0 / (data * (1.0 - np.minimum(1.0, judge_share)) + 1.0 / prior))
    return np.where((prior_var > 0) & (judge_share > 0) & (sd**2 < prior), people, sd)


def next_read_vars(
    sd: np.ndarray,
    n_reads: np.ndarray,
    judge_share: np.ndarray,
    prior_var: np.ndarray,
    one_read_var: float,
) -> np.ndarray:
    """The variance one more person's read of each idea corresponds to (its information is
    1 / this): what the idea's reads so far added on average, people's share of the evidence
    over its reads; for an idea nobody read, what a first read adds to the domain's prior
    (``one_read_var``: the variance of an idea read once). An idea whose readers repeat one
    another (one coarse grade they share: the board's interval stops at what it resolves)
    gains little from one more such read, and its value says so. ``prior_var`` 0: unknown."""
    has_prior = prior_var > 0
    prior = np.where(has_prior, prior_var, np.inf)
    gained = (1.0 / np.maximum(sd, 1e-9) ** 2 - 1.0 / prior) * (1.0 - np.minimum(1.0, judge_share))
    from_reads = has_prior & (n_reads > 0) & (gained > 1e-9)
    # Reads that left it at the domain's widest: valued as a first read.
    one = max(one_read_var, 1e-9)
    first = has_prior & (one_read_var < prior)
    first_var = 1.0 / (1.0 / one - np.where(first, 1.0 / prior, 0.0))
    return np.where(
        from_reads, n_reads / np.where(from_reads, gained, 1.0), np.where(first, first_var, one)
    )


def next_read_var(st: IdeaState, prior_var: float | None, one_read_var: float) -> float:
    """``next_read_vars`` of one idea."""
    return float(
        next_read_vars(
            np.array([st.sd]),
            np.array([st.n_reads]),
            np.array([st.judge_share]),
            np.array([prior_var or 0.0]),
            one_read_var,
        )[0]
    )


def board_p_tops(
    p_top: np.ndarray, estimate: np.ndarray, sd: np.ndarray, cut: np.ndarray
) -> np.ndarray:
    """Each idea's P(top) on the board: its own figure (``p_top``; NaN: none), or the normal
    approximation from its estimate and full sd, judges' predictions included."""
    approx = 0.5 * erfc((cut - estimate) / np.maximum(sd, 1e-9) / math.sqrt(2))
    return np.where(np.isnan(p_top), approx, p_top)


def board_p_top(st: IdeaState, cut: float) -> float:
    """``board_p_tops`` of one idea."""
    p = np.nan if st.p_top is None else st.p_top
    return float(
        board_p_tops(np.array([p]), np.array([st.estimate]), np.array([st.sd]), np.array([cut]))[0]
    )


def _reason(
    kind: str,
    st: IdeaState,
    policy: Policy,
    confidence: float | None,
    *,
    cut: float | None = None,
    closeness: float = 0.0,
) -> str:
    if kind == MIN_READS:
        reads = f"{st.n_reads} human read{'s' if st.n_reads != 1 else ''}"
        return (
            f"This idea has {reads}; every idea needs {policy.min_reads} before its rank is "
            "trusted."
        )
    if kind == RANDOM:
        return "Picked at random, so the ranking also hears about ideas it has not singled out."
    judge = (
        f" Your judge is unsure what you would say ({confidence:.0f} % confident)."
        if confidence is not None and confidence < 60
        else ""
    )
    focus = f" on {st.focus}" if st.focus else ""
    p = board_p_top(st, cut if cut is not None else st.estimate)
    top = f"P(top {st.top_n}) {p:.2f}" if st.top_n else f"P(top {100 * policy.share:g} %) {p:.2f}"
    reads = f"{st.n_reads} human read{'s' if st.n_reads != 1 else ''}"
    if NEAR_CUT_LOW <= p <= NEAR_CUT_HIGH:
        return (
            f"Near the shortlist's cut on the board ({top}): your read{focus} can decide "
            f"whether this idea makes the shortlist.{judge}"
        )
    side = "in" if p > NEAR_CUT_HIGH else "out of"
    if closeness >= OPEN_ON_PEOPLE and st.judge_share >= JUDGES_MATTER:
        return (
            f"The board, which counts the judges' predictions, has this idea safely {side} the "
            f"shortlist ({top}); on people's reads only ({reads}) its place is still open. "
            f"Your read{focus} checks what the predictions assume.{judge}"
        )
    return (
        f"Unlikely to change the shortlist ({top} on the board): not a deciding read. "
        f"Suggested to fill your queue where one more read narrows an interval most{focus}."
        f"{judge}"
    )


def _pair_arrays(candidates: Iterable[tuple[int, int]] | np.ndarray) -> np.ndarray:
    """The candidate pairs as an (n, 2) array of (reviewer id, idea id), in their order."""
    if isinstance(candidates, np.ndarray):
        return candidates.astype(np.int64, copy=False).reshape(-1, 2)
    return np.array(list(candidates), dtype=np.int64).reshape(-1, 2)


def pair_keys(reviewers: Any, ideas: Any) -> np.ndarray:
    """Each (reviewer, idea) pair as one integer, reviewer * 2^32 + idea, so that a million
    pairs are compared as arrays."""
    return np.asarray(reviewers, dtype=np.int64) * (1 << 32) + np.asarray(ideas, dtype=np.int64)


# How many of the best pairs the model's picks sort first, per slot to fill: enough for every
# slot in practice (a pair is passed over only when its reviewer is full or its idea has its
# reads); the rest are sorted only if the picks get that far.
SORTED_PER_SLOT = 20


def _best_first(rows: np.ndarray, keys: tuple[np.ndarray, ...], slots: int) -> Iterator[int]:
    """``rows`` in the order ``np.lexsort(keys)`` gives them (its last key primary), sorting
    the about ``SORTED_PER_SLOT * slots`` first by that key before the others: a full sort of
    a million candidate pairs took half the routing's CPU, and a round reads a few
    thousand. Exact: every row tied with the last of the first part is in it."""
    primary = keys[-1][rows]
    first = SORTED_PER_SLOT * max(slots, 1)
    if len(rows) > first:
        # The first-th smallest of the primary key; NaN sorts last, as lexsort puts it.
        bound = np.partition(primary, first - 1)[first - 1]
        head = primary <= bound
        parts = [rows[head], rows[~head]]
    else:
        parts = [rows]
    for part in parts:
        yield from part[np.lexsort(tuple(k[part] for k in keys))].tolist()


def route(
    *,
    ideas: Mapping[int, IdeaState] | IdeaStates,
    candidates: Iterable[tuple[int, int]] | np.ndarray,
    open_load: Mapping[int, int],
    confidence: Mapping[tuple[int, int], float] | None = None,
    one_read_var: float,
    policy: Policy = Policy(),
    seed: int = 0,
) -> list[Suggestion]:
    """One routing round: suggestions for every reviewer with room, by the module's rules.

    ``candidates``: (reviewer id, idea id) pairs, or an (n, 2) array of them. The pairs are
    handled as arrays (a million of them at scale): a read's value is computed once per idea
    and judge confidence (the only thing of the pair it depends on), not once per pair."""
    confidence = confidence or {}
    rng = np.random.default_rng(seed)
    states = IdeaStates.of(ideas)
    cuts = domain_cuts(states, policy.share)
    priors = prior_vars(states)
    pairs = _pair_arrays(candidates)
    idea_ids = states.idea_id
    if not len(idea_ids) or not len(pairs):
        return []
    pos = np.searchsorted(idea_ids, pairs[:, 1])
    known = (pos < len(idea_ids)) & (idea_ids[np.minimum(pos, len(idea_ids) - 1)] == pairs[:, 1])
    pairs, pos = pairs[known], pos[known]
    pair_r, pair_i = pairs[:, 0], pairs[:, 1]
    reviewers = np.unique(pair_r).tolist()
    slots = {r: max(0, min(policy.per_batch, policy.cap - open_load.get(r, 0))) for r in reviewers}
    picked = np.zeros(len(idea_ids), dtype=np.int64)  # new reads of each idea this round
    taken: set[tuple[int, int]] = set()
    out: list[Suggestion] = []

    def take(r: int, i: int, kind: str, value: float, closeness: float = 0.0) -> None:
        at = int(np.searchsorted(idea_ids, i))
        st = states.state(at)
        c = confidence.get((r, i))
        why = _reason(kind, st, policy, c, cut=cuts[st.domain], closeness=closeness)
        out.append(Suggestion(r, i, kind, value, why))
        taken.add((r, i))
        picked[at] += 1
        slots[r] -= 1

    def free(r: int, i: int) -> bool:
        return (
            slots[r] > 0
            and (r, i) not in taken
            and picked[np.searchsorted(idea_ids, i)] < policy.per_idea
        )

    # Each reviewer's pairs in the candidates' order.
    by_r = np.argsort(pair_r, kind="stable")
    bounds = np.searchsorted(pair_r[by_r], [*reviewers, np.iinfo(np.int64).max])
    pool_of = {r: by_r[bounds[j] : bounds[j + 1]] for j, r in enumerate(reviewers)}

    # 1. Random picks first: their share of each reviewer's slots is fixed by the policy.
    n_random = {r: int(round(policy.random_share * slots[r])) for r in reviewers}
    for r in reviewers:
        rows = pool_of[r]
        if slots[r] <= 0:
            rows = rows[:0]
        else:
            # No pair of this reviewer is taken yet: only earlier reviewers have picked.
            rows = rows[picked[pos[rows]] < policy.per_idea]
        pool = pair_i[rows]
        for i in rng.permutation(pool)[: n_random[r]].tolist():
            take(r, int(i), RANDOM, 0.0)
    # 2. Ideas below the minimum number of human reads, fewest reads first; each goes to the
    #    eligible reviewer with the most room left (ties: the lowest id).
    n_reads = states.n_reads  # every array below is by position in ``idea_ids``
    # Only the pairs of those ideas are sorted by idea, in the candidates' order.
    of_short = np.flatnonzero(n_reads[pos] < policy.min_reads)
    short = np.unique(pos[of_short])
    by_i = of_short[np.argsort(pos[of_short], kind="stable")]
    starts = np.searchsorted(pos[by_i], short)
    ends = np.searchsorted(pos[by_i], short, side="right")
    order = sorted(range(len(short)), key=lambda j: (n_reads[short[j]], idea_ids[short[j]]))
    for j in order:
        i = int(idea_ids[short[j]])
        need = policy.min_reads - int(n_reads[short[j]])
        readers = pair_r[by_i[starts[j] : ends[j]]].tolist()
        for r in sorted(readers, key=lambda r: (-slots[r], r)):
            if need <= 0:
                break
            if free(r, i):
                take(r, i, MIN_READS, 0.0)
                need -= 1
    # 3. The model's picks: every remaining pair by the value of its read at the cut (the
    #    board's P(top N), the figure the reason quotes), highest first; then, among equal
    #    values, where one more read narrows the interval most. The value depends on the pair
    #    through the judge's confidence only: it is computed once per idea.
    keys = pair_keys(pair_r, pair_i)
    left = np.ones(len(pair_r), dtype=bool)
    if taken:
        taken_pairs = _pair_arrays(taken)
        left = ~np.isin(keys, pair_keys(taken_pairs[:, 0], taken_pairs[:, 1]))
    est = states.estimate
    sd = np.maximum(states.sd, 1e-9)
    share = states.judge_share
    cut, prior = np.zeros(len(states)), np.zeros(len(states))
    for dom, at in states.by_domain:
        cut[at], prior[at] = cuts[dom], priors[dom]
    p_top = board_p_tops(states.p_top, est, sd, cut)
    # The probability that the idea sits on the other side of the cut than its estimate says,
    # on people's evidence alone (what the reasons call "open on people's reads").
    plain_closeness = 0.5 * erfc(np.abs(est - cut) / human_sds(sd, share, prior) / math.sqrt(2))
    var = next_read_vars(sd, n_reads, share, prior, one_read_var)
    plain_narrowing = sd - np.sqrt(1.0 / (1.0 / sd**2 + 1.0 / var))
    plain_value = cut_values(p_top, sd, var)
    judge = np.ones(len(pair_r))
    if confidence:
        # Each pair's confidence looked up by its key, by binary search: a million candidate
        # pairs at scale.
        known_pairs = _pair_arrays(confidence)
        known_keys = pair_keys(known_pairs[:, 0], known_pairs[:, 1])
        known_conf = np.fromiter(confidence.values(), float, count=len(confidence))
        by_key = np.argsort(known_keys)
        known_keys, known_conf = known_keys[by_key], known_conf[by_key]
        at = np.minimum(np.searchsorted(known_keys, keys), len(known_keys) - 1)
        hit = left & (known_keys[at] == keys)
        judge[hit] = 1.5 - np.clip(known_conf[at[hit]], 0.0, 100.0) / 100.0
    value = np.where(left, plain_value[pos] * judge, 0.0)
    narrowing = np.where(left, plain_narrowing[pos] * judge, 0.0)
    closeness = np.where(left, plain_closeness[pos], 0.0)
    room = sum(slots.values())
    best = _best_first(np.flatnonzero(left), (pair_i, pair_r, -narrowing, -value), room)
    for j in best:
        if room <= 0:
            break  # every reviewer is full: no later pair can be taken
        r, i = int(pair_r[j]), int(pair_i[j])
        if free(r, i):
            take(r, i, FROM_MODEL, float(value[j]), float(closeness[j]))
            room -= 1
    return out
