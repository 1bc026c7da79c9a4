"""The reasoning scatter computed as arrays gives what its definition gives, computed plainly
item by item (pure functions on small frames, no database)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from apps.judges.engine import alignment
from apps.judges.engine.embeddings import embed_texts_local_sparse

SCALES = {"a_dim": (0, 3), "b_dim": (0, 3), "c_dim": (0, 3)}
REASONS = ["alpha beta", "beta gamma delta", "gamma", "", "delta alpha", None]


def frames(seed: int, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Truth and finals with what real ones hold: repeated (reviewer, item) rows, missing
    scores, reasons empty or missing, three kinds at two k; ``n`` truth rows (few: pairs
    share fewer items than min_shared on some dimensions)."""
    rng = np.random.default_rng(seed)
    m = 2000
    truth = pd.DataFrame(
        {
            "reviewer_id": rng.integers(1, 9, n),
            "idea_id": rng.integers(100, 140, n),
            "dimension": rng.choice(["b_dim", "a_dim", "c_dim"], n),
            "score": rng.choice([0, 1, 2, 3, np.nan], n),
        }
    )
    truth["reviewer"] = "u" + truth["reviewer_id"].astype(str)
    finals = pd.DataFrame(
        {
            "reviewer_id": rng.integers(1, 9, m),
            "idea_id": rng.integers(100, 140, m),
            "dimension": rng.choice(["b_dim", "a_dim", "c_dim"], m),
            "kind": rng.choice(["personalized", "aggregate", "zero_shot"], m),
            "k": rng.choice([2, 9], m),
            "pred": rng.choice([1.0, 2.0, np.nan], m),
            "reason": rng.choice(np.array(REASONS, dtype=object), m),
        }
    )
    return truth, finals


def plainly(truth: pd.DataFrame, finals: pd.DataFrame, min_shared: int) -> list[dict]:
    """The definition, one reviewer pair and one shared item at a time."""
    scores: dict[int, dict[tuple[int, str], float]] = {}
    for r, i, d, s in truth[["reviewer_id", "idea_id", "dimension", "score"]].itertuples(
        index=False
    ):
        if not pd.isna(s):
            scores.setdefault(int(r), {}).setdefault((int(i), str(d)), float(s))
    pairs = {}
    for a in sorted(scores):
        for b in sorted(scores):
            shared = sorted(scores[a].keys() & scores[b].keys()) if a < b else []
            alphas = []
            for dim in sorted({d for _, d in shared}):
                items = [item for item in shared if item[1] == dim]
                if len(items) >= min_shared:
                    data = np.array([[scores[a][t] for t in items], [scores[b][t] for t in items]])
                    value = alignment.alpha(data, values=[0.0, 1.0, 2.0, 3.0])
                    if value is not None:
                        alphas.append(value)
            if alphas:
                pairs[(a, b)] = (float(np.mean(alphas)), shared)
    names = dict(zip(truth["reviewer_id"], truth["reviewer"], strict=True))
    out = []
    kept = finals[alignment.reasoned_rows(finals) & (finals["reason"].fillna("") != "")]
    for kind, group in kept.groupby("kind", sort=False):
        reasons = {
            (int(r.reviewer_id), int(r.idea_id), str(r.dimension)): str(r.reason)
            for r in group.itertuples()
        }
        texts = sorted(set(reasons.values()))
        if len(texts) < 2:
            continue
        vectors = embed_texts_local_sparse(texts).toarray()
        row = {t: j for j, t in enumerate(texts)}
        points = []
        for (a, b), (agreement, shared) in pairs.items():
            sims = [
                float(vectors[row[reasons[(a, i, d)]]] @ vectors[row[reasons[(b, i, d)]]])
                for i, d in shared
                if (a, i, d) in reasons and (b, i, d) in reasons
            ]
            if sims:
                points.append((names[a], names[b], agreement, float(np.mean(sims)), len(sims)))
        out.append((kind, int(group["k"].max()), points))
    return sorted(out, key=lambda r: alignment.KIND_ORDER.index(r[0]))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n", [400, 1500])
@pytest.mark.parametrize("min_shared", [1, 3])
def test_the_reasoning_scatter_is_its_definition(seed, n, min_shared):
    truth, finals = frames(seed, n)
    got = alignment.reasoning_structure(
        truth, finals, scales=SCALES, embed=embed_texts_local_sparse, min_shared=min_shared
    )
    want = plainly(truth, finals, min_shared)
    assert [(r["kind"], r["k"]) for r in got] == [(kind, k) for kind, k, _ in want]
    assert sum(len(points) for _, _, points in want) > 0
    for result, (_, _, points) in zip(got, want, strict=True):
        assert len(result["points"]) == len(points)
        for p, (a, b, agreement, similarity, n) in zip(result["points"], points, strict=True):
            assert (p["reviewer_a"], p["reviewer_b"], p["n_items"]) == (a, b, n)
            assert p["agreement"] == pytest.approx(agreement, abs=1e-12)
            assert p["similarity"] == pytest.approx(similarity, abs=1e-6)


def test_no_scored_item_gives_no_scatter():
    truth, finals = frames(0, 400)
    truth["score"] = np.nan
    assert (
        alignment.reasoning_structure(truth, finals, scales=SCALES, embed=embed_texts_local_sparse)
        == []
    )


def test_reasons_read_one_kind_at_a_time_give_the_same_scatter():
    truth, finals = frames(1, 1500)
    finals = finals.assign(final_id=np.arange(10_000, 10_000 + len(finals)))
    whole = alignment.reasoning_structure(
        truth, finals, scales=SCALES, embed=embed_texts_local_sparse
    )
    by_id = dict(zip(finals["final_id"], finals["reason"], strict=True))
    asked: list[tuple[str, list[int]]] = []

    def reasons(kind, final_ids):
        asked.append((kind, [int(i) for i in final_ids]))
        return [by_id[int(i)] for i in final_ids]

    got = alignment.reasoning_structure(
        truth, finals.drop(columns="reason"), scales=SCALES, embed=embed_texts_local_sparse,
        reasons=reasons,
    )  # fmt: skip
    assert got == whole and whole
    # Each kind asked once, for its own reasoned rows only.
    reasoned = finals[alignment.reasoned_rows(finals)]
    assert sorted(kind for kind, _ in asked) == sorted(reasoned["kind"].unique())
    for kind, ids in asked:
        assert ids == reasoned.loc[reasoned["kind"] == kind, "final_id"].tolist()


@pytest.mark.parametrize("keys", ["kind", ["dimension", "kind", "k"], ["reviewer_id", "dimension"]])
@pytest.mark.parametrize("sort", [True, False])
def test_groups_taken_one_at_a_time_are_groupbys(keys, sort):
    _, finals = frames(2, 400)
    finals = finals.iloc[::-1]  # an index out of order, as a filtered frame's
    got = list(alignment.frame_groups(finals, keys, sort=sort))
    want = list(finals.groupby(keys, sort=sort))
    assert [key for key, _ in got] == [key for key, _ in want]
    for (_, ours), (_, theirs) in zip(got, want, strict=True):
        pd.testing.assert_frame_equal(ours, theirs)


class DictStore:
    """A part store in memory (the product's is the cache: selectors.reports)."""

    def __init__(self) -> None:
        self.parts: dict[str, dict] = {}
        self.asked: list[list[str]] = []

    def get_many(self, digests):
        self.asked.append(list(digests))
        return {d: self.parts[d] for d in digests if d in self.parts}

    def set_many(self, parts):
        self.parts.update(parts)


def two_domain_frames(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, dict[int, str]]:
    """frames() where reviewers 1-4 score only ideas 100-119 (domain x) and 5-8 only 120-139
    (domain y), as in an organisation whose reviewers each work in one domain."""
    truth, finals = frames(seed, 1500)
    for frame in (truth, finals):
        in_y = frame["reviewer_id"] >= 5
        frame["idea_id"] = np.where(in_y, 120 + frame["idea_id"] % 20, 100 + frame["idea_id"] % 20)
    # Named so that the domain of the lower reviewer ids sorts last: the merged points must be
    # put back in the reviewers' order.
    domain_of = {i: ("x" if i < 120 else "w") for i in range(100, 140)}
    return truth, finals.assign(final_id=np.arange(50_000, 50_000 + len(finals))), domain_of


def structure(truth, finals, **options):
    by_id = dict(zip(finals["final_id"], finals["reason"], strict=True))
    asked: list[int] = []

    def reasons(kind, final_ids):
        asked.extend(int(i) for i in final_ids)
        return [by_id[int(i)] for i in final_ids]

    got = alignment.reasoning_structure(
        truth, finals.drop(columns="reason"), scales=SCALES, embed=embed_texts_local_sparse,
        reasons=reasons, **options,
    )  # fmt: skip
    return got, asked


@pytest.mark.parametrize("seed", range(3))
def test_a_scope_split_by_domain_gives_what_it_gives_whole(seed):
    truth, finals, domain_of = two_domain_frames(seed)
    whole, _ = structure(truth, finals)
    assert whole and all(r["points"] for r in whole)
    store = DictStore()
    split, _ = structure(truth, finals, part_of_idea=domain_of, store=store)
    assert split == whole
    assert len(store.parts) == 2  # one part per domain
    # Again with nothing changed: both parts come from the store, no reason is read.
    again, asked = structure(truth, finals, part_of_idea=domain_of, store=store)
    assert again == whole and asked == []


def test_a_part_whose_rows_changed_is_computed_again_and_the_other_reused():
    truth, finals, domain_of = two_domain_frames(5)
    store = DictStore()
    structure(truth, finals, part_of_idea=domain_of, store=store)
    # One score in domain y changes (a reviewer edited a rating).
    at = truth.index[(truth["idea_id"] >= 120) & truth["score"].notna()][0]
    truth.loc[at, "score"] = (truth.loc[at, "score"] + 1) % 4
    got, asked = structure(truth, finals, part_of_idea=domain_of, store=store)
    assert got == structure(truth, finals)[0]
    in_y = finals.loc[finals["final_id"].isin(asked), "idea_id"] >= 120
    assert asked and in_y.all()  # only domain y's reasons were read again
    assert len(store.parts) == 3


def test_a_reviewer_scoring_in_two_domains_makes_the_scope_one_part():
    """A pair of such reviewers could share items in both domains: their point is over both."""
    truth, finals, domain_of = two_domain_frames(6)
    truth.loc[truth.index[0], ["reviewer_id", "reviewer", "idea_id"]] = [1, "u1", 130]
    store = DictStore()
    got, _ = structure(truth, finals, part_of_idea=domain_of, store=store)
    assert got == structure(truth, finals)[0]
    assert len(store.parts) == 1


@pytest.mark.parametrize("same", [True, False])
def test_a_kind_with_one_reason_per_domain_is_shown_when_the_domains_differ(same):
    """The scope shows a kind with two distinct reasons: one in each domain counts, the same
    one in both does not, as computed whole."""
    truth, finals, domain_of = two_domain_frames(7)
    zero = finals["kind"] == "zero_shot"
    finals.loc[zero, "reason"] = np.where(
        finals.loc[zero, "idea_id"] < 120, "alpha beta", "alpha beta" if same else "gamma"
    )
    whole, _ = structure(truth, finals)
    split, _ = structure(truth, finals, part_of_idea=domain_of, store=DictStore())
    assert split == whole
    assert ("zero_shot" in {r["kind"] for r in whole}) is (not same)
