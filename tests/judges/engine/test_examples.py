"""Example selection: no leakage, right reviewers, reproducible sampling without replacement."""

import pandas as pd
import pytest

from apps.judges.engine.examples import select_examples

TARGET_REVIEWER, OTHER_A, OTHER_B = 1, 2, 3


def build_pool() -> pd.DataFrame:
    """3 reviewers x 12 ideas (2 ideas per patent) x 2 dimensions in "nlp", plus a few rows in
    another domain. rating_id is unique per row."""
    rows = []
    rid = 1000
    for domain in ("nlp", "materials"):
        n_ideas = 12 if domain == "nlp" else 4
        for idea in range(n_ideas):
            idea_id = idea + (0 if domain == "nlp" else 500)
            patent_id = idea_id // 2
            for reviewer in (TARGET_REVIEWER, OTHER_A, OTHER_B):
                for dimension in ("specificity", "innovativeness"):
                    rid += 1
                    rows.append(
                        dict(
                            rating_id=rid,
                            idea_id=idea_id,
                            patent_id=patent_id,
                            reviewer_id=reviewer,
                            domain=domain,
                            dimension=dimension,
                            score=1 + (idea + reviewer) % 4,
                        )
                    )
    return pd.DataFrame(rows)


POOL = build_pool()
TARGET = dict(
    target_reviewer_id=TARGET_REVIEWER,
    target_idea_id=4,
    target_patent_id=2,
    domain="nlp",
    dimension="specificity",
)


def rows(ids):
    return POOL.set_index("rating_id").loc[ids]


@pytest.mark.parametrize("kind", ["personalized", "aggregate"])
@pytest.mark.parametrize("seed", range(6))
def test_it_never_leaks_the_target_or_its_patent(kind, seed):
    ids = select_examples(POOL, kind=kind, k=9, seed=seed, **TARGET)
    chosen = rows(ids)
    assert len(ids) == 9 and len(set(ids)) == 9  # without replacement
    assert (chosen["idea_id"] != 4).all()
    assert (chosen["patent_id"] != 2).all()  # idea 5 shares patent 2: excluded too
    assert (chosen["idea_id"] != 5).all()
    assert (chosen["domain"] == "nlp").all()
    assert (chosen["dimension"] == "specificity").all()


def test_personalized_examples_come_only_from_the_target_reviewer():
    for seed in range(5):
        ids = select_examples(POOL, kind="personalized", k=9, seed=seed, **TARGET)
        assert set(rows(ids)["reviewer_id"]) == {TARGET_REVIEWER}


def test_aggregate_examples_never_come_from_the_target_reviewer():
    seen = set()
    for seed in range(5):
        ids = select_examples(POOL, kind="aggregate", k=9, seed=seed, **TARGET)
        seen |= set(rows(ids)["reviewer_id"])
    assert TARGET_REVIEWER not in seen
    assert seen == {OTHER_A, OTHER_B}


def test_zero_shot_takes_no_examples():
    assert select_examples(POOL, kind="zero_shot", k=9, seed=0, **TARGET) == []


def test_the_same_seed_gives_the_same_examples_whatever_the_row_order():
    first = select_examples(POOL, kind="aggregate", k=5, seed=7, **TARGET)
    shuffled = POOL.sample(frac=1.0, random_state=3)
    assert select_examples(shuffled, kind="aggregate", k=5, seed=7, **TARGET) == first


def test_different_seeds_give_different_examples():
    draws = {
        tuple(select_examples(POOL, kind="aggregate", k=5, seed=s, **TARGET)) for s in range(3)
    }
    assert len(draws) == 3


def test_it_takes_every_candidate_when_fewer_than_k():
    # personalized candidates: 12 ideas - 2 on the target patent = 10
    ids = select_examples(POOL, kind="personalized", k=50, seed=0, **TARGET)
    assert len(ids) == 10 == len(set(ids))


def test_a_new_unrelated_rating_does_not_reshuffle_the_selection():
    before = select_examples(POOL, kind="personalized", k=3, seed=1, **TARGET)
    extra = pd.DataFrame(
        [
            dict(
                rating_id=1,
                idea_id=99,
                patent_id=99,
                reviewer_id=TARGET_REVIEWER,
                domain="nlp",
                dimension="specificity",
                score=2,
            )
        ]
    )
    after = select_examples(pd.concat([POOL, extra]), kind="personalized", k=3, seed=1, **TARGET)
    assert set(after) - set(before) <= {1}
    assert len(set(before) & set(after)) >= 2


def test_it_rejects_an_unknown_kind_and_a_pool_missing_columns():
    with pytest.raises(ValueError, match="kind"):
        select_examples(POOL, kind="panel", k=3, seed=0, **TARGET)
    with pytest.raises(ValueError, match="patent_id"):
        select_examples(POOL.drop(columns=["patent_id"]), kind="aggregate", k=3, seed=0, **TARGET)
