"""The demo generator: sizes, determinism, gates and the planted disagreement structure."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta

import krippendorff
import numpy as np
import pandas as pd
import pytest

from apps.demo.generator import DIMENSIONS, PLANTED, generate_demo

NOW = datetime(2026, 3, 1, tzinfo=UTC)
SCALES = {key: (lo, hi) for key, lo, hi in DIMENSIONS}


@pytest.fixture(scope="module")
def demo():
    return generate_demo(seed=0, now=NOW)


@pytest.fixture(scope="module")
def frame(demo) -> pd.DataFrame:
    df = pd.DataFrame(demo.ratings)
    patent_domain = {p["external_id"]: p["domain"] for p in demo.patents}
    idea_domain = {i["external_id"]: patent_domain[i["patent"]] for i in demo.ideas}
    background = {r["username"]: r["background"] for r in demo.reviewers}
    df["domain"] = df["idea"].map(idea_domain)
    df["background"] = df["reviewer"].map(background)
    df["score"] = df["score"].astype(float)
    return df


def _alpha(sub: pd.DataFrame, dim: str) -> float:
    lo, hi = SCALES[dim]
    matrix = sub.pivot_table(index="reviewer", columns="idea", values="score", dropna=False)
    return float(
        krippendorff.alpha(
            reliability_data=matrix.to_numpy(dtype=float),
            level_of_measurement="ordinal",
            value_domain=list(range(lo, hi + 1)),
        )
    )


def _mean_jaccard(sub: pd.DataFrame, min_co_rated: int = 10) -> tuple[float | None, int]:
    """Mean Jaccard of above-own-median sets over reviewer pairs with >= min_co_rated items."""
    scores = sub.dropna(subset=["score"]).pivot_table(
        index="idea", columns="reviewer", values="score"
    )
    medians = scores.median()
    values = []
    for a, b in itertools.combinations(scores.columns, 2):
        both = scores[[a, b]].dropna()
        if len(both) < min_co_rated:
            continue
        above_a = set(both.index[both[a] > medians[a]])
        above_b = set(both.index[both[b] > medians[b]])
        if not above_a | above_b:
            continue
        values.append(len(above_a & above_b) / len(above_a | above_b))
    return (float(np.mean(values)) if values else None), len(values)


def test_the_same_seed_gives_the_same_rows_and_another_seed_does_not():
    a = generate_demo(seed=7, now=NOW)
    b = generate_demo(seed=7, now=NOW)
    c = generate_demo(seed=8, now=NOW)
    for kind in ("patents", "ideas", "reviewers", "ratings", "pending"):
        assert getattr(a, kind) == getattr(b, kind)
    assert a.ratings != c.ratings
    assert a.ideas != c.ideas


def test_sizes_match_what_was_asked(demo):
    counts = demo.counts()
    assert counts["domains"] == 3
    assert counts["patents"] == 120
    assert counts["ideas"] == 300
    assert counts["reviewers"] == 25
    assert 2700 <= counts["ratings"] <= 3300
    assert counts["pending"] == 25 * 4
    assert {d["key"] for d in demo.domains} == {"nlp", "cs", "materials"}


def test_smaller_sizes_scale_down():
    small = generate_demo(
        seed=1, n_patents=30, n_ideas=75, n_reviewers=8, ratings_target=600, now=NOW
    )
    assert len(small.patents) == 30 and len(small.ideas) == 75 and len(small.reviewers) == 8
    assert 400 <= len(small.ratings) <= 700


def test_every_idea_is_grounded_in_one_patent_with_two_or_three_ideas_each(demo):
    patents = {p["external_id"] for p in demo.patents}
    per_patent = Counter(i["patent"] for i in demo.ideas)
    assert set(per_patent) == patents
    assert set(per_patent.values()) <= {2, 3}
    assert len({i["external_id"] for i in demo.ideas}) == len(demo.ideas)
    assert len({p["title"] for p in demo.patents}) == len(demo.patents)


def test_texts_read_like_patents_and_product_ideas(demo):
    for p in demo.patents:
        assert len(p["abstract"]) > 200 and p["claims"].startswith("1. ")
        assert "wherein" in p["claims"]
    for i in demo.ideas:
        for key in ("title", "description", "implementation", "differentiation", "source"):
            assert i[key].strip(), (i["external_id"], key)
        assert "{" not in i["description"] + i["differentiation"] + i["implementation"]
    text = " ".join(i["description"] for i in demo.ideas).lower()
    assert "lorem" not in text
    sources = Counter(i["source"] for i in demo.ideas)
    assert {"divergent-convergent v2", "multi-agent debate", "iterative rewriter"} <= set(sources)
    # Ideas are not copies of each other.
    assert len({i["description"] for i in demo.ideas}) > 0.95 * len(demo.ideas)


def test_reviewers_have_one_or_two_domains_and_both_backgrounds(demo):
    backgrounds = Counter(r["background"] for r in demo.reviewers)
    assert backgrounds["technical"] >= 10 and backgrounds["business"] >= 6
    for r in demo.reviewers:
        assert 1 <= len(r["domains"].split(";")) <= 2
        assert " " in r["name"] and r["email"].endswith("@demo.pluralist.example")
        assert r["username"].isascii()
    assert len({r["username"] for r in demo.reviewers}) == 25


def test_every_rating_respects_the_staged_screening_gates(frame):
    assert set(frame["dimension"]) == set(SCALES)
    for (_, _), sub in frame.groupby(["reviewer", "idea"]):
        assert len(sub) == 6, "every screening has one row per dimension"
        s = dict(zip(sub["dimension"], sub["score"], strict=True))
        assert not np.isnan(s["specificity"])
        if s["specificity"] <= 2:
            assert all(np.isnan(s[d]) for d in SCALES if d != "specificity")
            continue
        for d in ("technical_validity", "need_validity", "market_size"):
            assert not np.isnan(s[d])
        if s["technical_validity"] <= 1:
            assert np.isnan(s["innovativeness"]) and np.isnan(s["competitive_advantage"])
        else:
            assert not np.isnan(s["innovativeness"]) and not np.isnan(s["competitive_advantage"])
    scored = frame.dropna(subset=["score"])
    for dim, (lo, hi) in SCALES.items():
        values = scored.loc[scored["dimension"] == dim, "score"]
        assert values.between(lo, hi).all() and (values == values.round()).all()
    # Most screenings pass specificity, so most ratings are complete.
    spec = frame[frame["dimension"] == "specificity"]["score"]
    assert (spec >= 3).mean() > 0.85


def test_rationales_and_dates_look_like_real_reviewing(frame):
    scored = frame.dropna(subset=["score"])
    share = (scored["rationale"] != "").mean()
    assert 0.15 < share < 0.5
    assert (frame.loc[frame["score"].isna(), "rationale"] == "").all()
    stamps = pd.to_datetime(frame["created_at"], utc=True)
    assert stamps.min() >= NOW - timedelta(days=61) and stamps.max() <= NOW
    assert stamps.max() - stamps.min() > timedelta(days=40)


def test_each_idea_is_rated_by_two_to_four_reviewers_of_its_domain(demo, frame):
    reviewer_domains = {r["username"]: set(r["domains"].split(";")) for r in demo.reviewers}
    raters = frame.groupby("idea")["reviewer"].nunique()
    assert raters.between(2, 4).all()
    assert frame.apply(lambda r: r["domain"] in reviewer_domains[r["reviewer"]], axis=1).all()
    # Some ideas are read by nobody: the judges predict those.
    assert frame["idea"].nunique() < len(demo.ideas)


def test_reviewers_build_enough_history_for_judges_and_pairs(frame):
    scored = frame.dropna(subset=["score"])
    history = scored.groupby(["reviewer", "domain", "dimension"]).size()
    innov = history.xs("innovativeness", level="dimension")
    assert (innov >= 10).mean() > 0.7, "most reviewers have >= 10 innovativeness scores in a domain"
    pairs_with_10 = 0
    for _, sub in frame[frame["dimension"] == "specificity"].groupby("domain"):
        items = sub.groupby("reviewer")["idea"].apply(set)
        for a, b in itertools.combinations(items.index, 2):
            pairs_with_10 += len(items[a] & items[b]) >= 10
    assert pairs_with_10 >= 25


def test_pending_ideas_are_in_the_reviewers_domains_and_not_yet_rated_by_them(demo, frame):
    reviewer_domains = {r["username"]: set(r["domains"].split(";")) for r in demo.reviewers}
    patent_domain = {p["external_id"]: p["domain"] for p in demo.patents}
    idea_domain = {i["external_id"]: patent_domain[i["patent"]] for i in demo.ideas}
    rated = set(zip(frame["reviewer"], frame["idea"], strict=True))
    per_reviewer = Counter(p["reviewer"] for p in demo.pending)
    assert set(per_reviewer.values()) == {4}
    for p in demo.pending:
        assert (p["reviewer"], p["idea"]) not in rated
        assert idea_domain[p["idea"]] in reviewer_domains[p["reviewer"]]
    assert len({(p["reviewer"], p["idea"]) for p in demo.pending}) == len(demo.pending)


@pytest.mark.parametrize("seed", [0, 1])
def test_reviewers_disagree_on_raw_scores_but_pick_similar_strong_ideas(seed):
    """The paper's Table 3: low fine alpha, clearly higher coarse Jaccard, on planted dimensions."""
    demo = generate_demo(seed=seed, now=NOW)
    df = pd.DataFrame(demo.ratings)
    patent_domain = {p["external_id"]: p["domain"] for p in demo.patents}
    df["domain"] = df["idea"].map(
        {i["external_id"]: patent_domain[i["patent"]] for i in demo.ideas}
    )
    df["score"] = df["score"].astype(float)
    alphas: dict[str, list[float]] = defaultdict(list)
    jaccards: dict[str, list[float]] = defaultdict(list)
    for (_, dim), sub in df.groupby(["domain", "dimension"]):
        alphas[dim].append(_alpha(sub, dim))
        jac, n_pairs = _mean_jaccard(sub)
        assert n_pairs >= 5
        jaccards[dim].append(jac)
    fine = {d: float(np.mean(v)) for d, v in alphas.items()}
    coarse = {d: float(np.mean(v)) for d, v in jaccards.items()}
    for dim in PLANTED:
        assert -0.3 < fine[dim] < 0.55, (dim, fine[dim])
        assert 0.4 <= coarse[dim] <= 0.9, (dim, coarse[dim])
        assert coarse[dim] > fine[dim], (dim, fine[dim], coarse[dim])
    planted_fine = np.mean([fine[d] for d in PLANTED])
    planted_coarse = np.mean([coarse[d] for d in PLANTED])
    assert planted_coarse - planted_fine > 0.15
    # Specificity and technical validity are nearer consensus than the planted dimensions.
    assert np.mean([fine["specificity"], fine["technical_validity"]]) > planted_fine + 0.2


def test_business_reviewers_are_stricter_on_need_and_market(frame):
    scored = frame.dropna(subset=["score"])
    scored = scored[scored["score"] > 0]  # 0 = "not B2B" is a category, not a grade
    means = scored.groupby(["dimension", "background"])["score"].mean()
    for dim in ("need_validity", "market_size"):
        assert means[(dim, "business")] < means[(dim, "technical")] - 0.1, dim


def test_an_ideas_text_partly_predicts_how_reviewers_score_it(demo, frame):
    """A text-similarity judge can learn the planted quality: TF-IDF ridge on held-out ideas."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import cross_val_predict

    scored = frame.dropna(subset=["score"])
    texts = {
        i["external_id"]: " ".join([i["description"], i["differentiation"]]) for i in demo.ideas
    }
    for dim, minimum in (("competitive_advantage", 0.2), ("specificity", 0.4)):
        target = scored[scored["dimension"] == dim].groupby("idea")["score"].mean()
        x = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True).fit_transform(
            [texts[i] for i in target.index]
        )
        predicted = cross_val_predict(Ridge(alpha=3.0), x, target.to_numpy(), cv=5)
        r = np.corrcoef(predicted, target.to_numpy())[0, 1]
        assert r > minimum, (dim, r)


def test_consumer_framed_ideas_get_the_not_b2b_category_from_most_reviewers(demo, frame):
    consumer = {
        i["external_id"]
        for i in demo.ideas
        if "household" in i["description"]
        or "hobbyist" in i["description"]
        or "consumer app" in i["description"]
    }
    need = frame[(frame["dimension"] == "need_validity") & frame["score"].notna()]
    zeros = need[need["score"] == 0]
    assert len(zeros) > 0
    assert set(zeros["idea"]) <= consumer
