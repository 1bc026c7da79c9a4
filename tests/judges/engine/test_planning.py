"""Run planning (pure): batch example selection equals select_examples, unit order, chunks."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from apps.judges.engine.examples import select_examples
from apps.judges.services import planning


def _pool(seed: int = 0, reviewers: int = 6, ideas: int = 40) -> list[list[int]]:
    rng = random.Random(seed)
    rows, rating_id = [], 1000
    for idea in range(ideas):
        patent = 500 + idea // 3  # three ideas per patent: leakage through patents is possible
        for reviewer in range(1, reviewers + 1):
            if rng.random() < 0.6:
                rows.append([rating_id, idea, patent, reviewer, rng.randint(1, 5)])
                rating_id += 1
    rng.shuffle(rows)  # the draw must not depend on row order
    return rows


def _frame(rows: list[list[int]]) -> pd.DataFrame:
    return pd.DataFrame(
        [(r, i, p, rv, "d", "dim", s) for r, i, p, rv, s in rows],
        columns=[
            "rating_id",
            "idea_id",
            "patent_id",
            "reviewer_id",
            "domain",
            "dimension",
            "score",
        ],
    )


def test_it_selects_exactly_the_examples_select_examples_does_for_every_unit():
    rows = _pool()
    targets = planning.leave_one_out_targets(rows, reviewer_id=None, min_history=1)
    configs = [
        planning.ConfigSpec(1, "aggregate", (1, 2, 5, 9), 3),
        planning.ConfigSpec(2, "personalized", (1, 2, 5, 9), 3),
        planning.ConfigSpec(3, "zero_shot", (0,), 1),
    ]
    units = planning.plan_units(dimension_ids=[7], targets={7: targets}, configs=configs)
    batch = planning.examples_for_units(units, {7: rows})
    frame = _frame(rows)
    for unit, ids in zip(units, batch, strict=True):
        assert ids == select_examples(
            frame,
            kind=unit.kind,
            target_reviewer_id=unit.reviewer_id,
            target_idea_id=unit.idea_id,
            target_patent_id=unit.patent_id,
            domain="d",
            dimension="dim",
            k=unit.k,
            seed=unit.seed,
        ), unit


def test_a_smaller_k_is_a_prefix_of_the_larger_ks_examples():
    rows = _pool(seed=1)
    targets = planning.leave_one_out_targets(rows, reviewer_id=2, min_history=1)
    units = planning.plan_units(
        dimension_ids=[1],
        targets={1: targets},
        configs=[planning.ConfigSpec(1, "personalized", (2, 9), 1)],
    )
    picked = dict(
        zip(
            [(u.idea_id, u.k) for u in units],
            planning.examples_for_units(units, {1: rows}),
            strict=True,
        )
    )
    for (idea, k), ids in picked.items():
        if k == 2:
            assert ids == picked[(idea, 9)][:2]


def test_no_example_shares_the_targets_patent_and_the_target_is_never_its_own_example():
    rows = _pool(seed=2)
    by_id = {r[0]: r for r in rows}
    targets = planning.leave_one_out_targets(rows, reviewer_id=None, min_history=1)
    units = planning.plan_units(
        dimension_ids=[1],
        targets={1: targets},
        configs=[
            planning.ConfigSpec(1, "personalized", (9,), 2),
            planning.ConfigSpec(2, "aggregate", (9,), 2),
        ],
    )
    for unit, ids in zip(units, planning.examples_for_units(units, {1: rows}), strict=True):
        for rid in ids:
            assert by_id[rid][2] != unit.patent_id and by_id[rid][1] != unit.idea_id
            mine = by_id[rid][3] == unit.reviewer_id
            assert mine if unit.kind == "personalized" else not mine


def test_the_calls_for_one_reviewer_and_dimension_are_planned_back_to_back():
    targets = [[2, 10, 1], [1, 11, 2], [2, 12, 3], [1, 13, 4]]
    units = planning.plan_units(
        dimension_ids=[1],
        targets={1: targets},
        configs=[planning.ConfigSpec(1, "personalized", (2,), 1)],
    )
    assert [u.reviewer_id for u in units] == [1, 1, 2, 2]


@pytest.mark.parametrize(
    ("backend", "expected"),
    [
        ("local", [(0, 20)]),
        ("openai", [(0, 4), (4, 8), (8, 10), (10, 14), (14, 18), (18, 20)]),
    ],
)
def test_llm_runs_are_split_into_chunks_and_local_runs_stay_whole(backend, expected):
    configs = [
        planning.ConfigSpec(1, "aggregate", (2,), 1, backend),
        planning.ConfigSpec(2, "personalized", (2,), 1, backend),
    ]
    targets = [[1, i, i] for i in range(10)]
    units = planning.plan_units(dimension_ids=[1], targets={1: targets}, configs=configs)
    assert planning.chunk_bounds(units, {1: backend, 2: backend}, 4) == expected


def test_a_local_chunk_spans_dimensions_and_configurations_and_llm_chunks_do_not():
    configs = [
        planning.ConfigSpec(1, "aggregate", (2,), 1, "local"),
        planning.ConfigSpec(2, "personalized", (2,), 1, "openai"),
        planning.ConfigSpec(3, "zero_shot", (0,), 1, "local"),
    ]
    targets = [[1, i, i] for i in range(3)]
    units = planning.plan_units(
        dimension_ids=[1, 2], targets={1: targets, 2: targets}, configs=configs
    )
    bounds = planning.chunk_bounds(units, {1: "local", 2: "openai", 3: "local"}, 2)
    # Per dimension: 3 aggregate (local), 3 personalized (LLM, chunks of 2), 3 zero-shot (local);
    # the zero-shot units of dimension 1 and the aggregate units of dimension 2 are one chunk.
    assert bounds == [(0, 3), (3, 5), (5, 6), (6, 12), (12, 14), (14, 15), (15, 18)]
    for start, stop in bounds:
        chunk = units[start:stop]
        if any(u.config_id == 2 for u in chunk):
            assert {(u.config_id, u.dimension_id) for u in chunk} in ({(2, 1)}, {(2, 2)})


def test_a_local_configuration_without_examples_is_judged_with_one_seed_and_an_llm_with_all():
    configs = [
        planning.ConfigSpec(1, "zero_shot", (0,), 3, "local"),
        planning.ConfigSpec(2, "personalized", (0, 2), 3, "local"),
        planning.ConfigSpec(3, "aggregate", (0,), 3, "openai"),
    ]
    targets = [[1, i, i] for i in range(4)]
    units = planning.plan_units(dimension_ids=[1], targets={1: targets}, configs=configs)
    seeds = {}
    for u in units:
        seeds.setdefault((u.config_id, u.k), set()).add(u.seed)
    assert seeds == {(1, 0): {0}, (2, 0): {0}, (2, 2): {0, 1, 2}, (3, 0): {0, 1, 2}}
    assert len(units) == 4 * (1 + 1 + 3 + 3)


def test_a_plan_stored_before_the_one_seed_rule_keeps_every_seed():
    """A run planned by the earlier code and resumed after the upgrade derives the units its
    chunks were cut from."""
    stored = {"id": 1, "kind": "zero_shot", "k_values": [0], "seeds": 3, "backend": "local"}
    spec = planning.ConfigSpec.from_dict(stored)
    assert planning.seeds_judged(spec, 0) == 3
    assert planning.ConfigSpec.from_dict(
        planning.ConfigSpec(**{**stored, "k_values": (0,)}).to_dict()
    ) == (planning.ConfigSpec(1, "zero_shot", (0,), 3, "local"))
    assert planning.seeds_judged(planning.ConfigSpec(1, "zero_shot", (0,), 3, "local"), 0) == 1
