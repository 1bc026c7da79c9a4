"""The demo's truth oracle: any reviewer's rating of any idea, by the generator's own model."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from datetime import UTC, datetime

import numpy as np
import pytest

from apps.demo.generator import DIMENSION_KEYS, generate_demo

NOW = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def demo():
    return generate_demo(seed=0, now=NOW)


def _shipped(demo) -> dict[tuple[str, str], dict[str, object]]:
    out: dict[tuple[str, str], dict[str, object]] = defaultdict(dict)
    for row in demo.ratings:
        out[(row["reviewer"], row["idea"])][row["dimension"]] = row["score"]
    return out


def test_the_oracle_reproduces_every_rating_the_shipped_demo_has(demo):
    shipped = _shipped(demo)
    assert len(shipped) > 400
    for (reviewer, idea), scores in shipped.items():
        assert demo.oracle.rating(reviewer, idea) == scores, (reviewer, idea)


def test_the_oracle_answers_unrated_pairs_the_same_way_every_time_and_in_any_order(demo):
    shipped = _shipped(demo)
    users = [r["username"] for r in demo.reviewers]
    ideas = [i["external_id"] for i in demo.ideas]
    pairs = [(u, i) for u in users[:6] for i in ideas[:60] if (u, i) not in shipped]
    first = [demo.oracle.rating(u, i) for u, i in pairs]
    again = generate_demo(seed=0, now=NOW)
    backwards = [again.oracle.rating(u, i) for u, i in reversed(pairs)][::-1]
    assert first == backwards
    other_seed = generate_demo(seed=1, now=NOW)
    users1 = [r["username"] for r in other_seed.reviewers]
    ideas1 = [i["external_id"] for i in other_seed.ideas]
    assert [other_seed.oracle.rating(u, i) for u in users1[:6] for i in ideas1[:60]] != first


def test_asking_the_oracle_changes_no_byte_of_the_demo():
    def digest(d) -> str:
        parts = (d.patents, d.ideas, d.reviewers, d.ratings, d.pending, d.latent)
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()

    a = generate_demo(seed=4, now=NOW)
    before = digest(a)
    for u in [r["username"] for r in a.reviewers]:
        for i in [x["external_id"] for x in a.ideas[:40]]:
            a.oracle.rating(u, i)
    assert digest(a) == before == digest(generate_demo(seed=4, now=NOW))


def test_unrated_pairs_follow_the_truth_as_closely_as_the_demos_own_ratings(demo):
    """The oracle is the perception model, not a lookup: grades of pairs the demo never rated
    rise with the idea's latent quality as much as the shipped ones do."""
    shipped = _shipped(demo)
    users = [r["username"] for r in demo.reviewers]
    ideas = [i["external_id"] for i in demo.ideas]

    def corr(pairs) -> float:
        x, y = [], []
        for u, i in pairs:
            g = demo.oracle.grade(u, i, "specificity")
            x.append(g)
            y.append(demo.latent[i]["specificity"])
        return float(np.corrcoef(x, y)[0, 1])

    rated = list(shipped)
    unrated = [(u, i) for u in users for i in ideas if (u, i) not in shipped][: len(rated)]
    assert corr(unrated) > 0.6
    assert abs(corr(unrated) - corr(rated)) < 0.1
    assert demo.truth()[ideas[0]] == pytest.approx(
        np.mean([demo.latent[ideas[0]][d] for d in DIMENSION_KEYS])
    )
