"""compute_metrics: the contract, JSON safety, missing-not-zero, agreement with the reference."""

import json

import krippendorff  # GPL-3.0 reference implementation: tests and benchmarks only
import pytest

from apps.disagreement.analysis import compute_metrics, krippendorff_alpha, reading
from apps.disagreement.analysis.readings import (
    MIN_PAIRS_FOR_VERDICT,
    READ_AGREE,
    READ_DISAGREE,
    READ_SCALES,
    READ_SCORES_DIFFER_ONLY,
    READ_TOO_LITTLE,
)
from apps.disagreement.analysis.synthetic import synthetic_frame, synthetic_scales

from .helpers import cell, frame_from, metrics_of

TOP_KEYS = {
    "level",
    "n_ratings",
    "n_scored",
    "n_ideas",
    "n_reviewers",
    "cells",
    "strictness",
    "strictness_spread",
    "pairwise",
    "contested",
    "panel",
    "categories",
    "categories_included",
    "backgrounds",
}


@pytest.fixture(scope="module")
def synthetic():
    frame = synthetic_frame(
        n_ratings=20_000, n_ideas=800, n_reviewers=24, n_dimensions=3, n_domains=2, seed=3
    )
    return frame, compute_metrics(frame, scales=synthetic_scales(3), n_boot=200, seed=1)


def test_the_output_has_the_contract_keys_and_is_strict_json(synthetic):
    frame, metrics = synthetic
    assert set(metrics) == TOP_KEYS
    json.dumps(metrics, allow_nan=False)
    assert metrics["n_ratings"] == len(frame)
    assert metrics["n_scored"] == int(frame["score"].notna().sum())
    assert (metrics["n_ideas"], metrics["n_reviewers"]) == (800, 24)
    c = metrics["cells"][0]
    assert set(c) == {"domain", "dimension", "background", "fine", "coarse", "reading"}
    assert set(c["fine"]) == {"alpha", "ci_low", "ci_high", "n_items", "n_scores"}
    assert set(c["coarse"]) == {"jaccard", "n_pairs", "n_pairs_empty_union"}
    assert {
        "domain",
        "dimension",
        "reviewer",
        "reviewer_id",
        "background",
        "mean",
        "std",
        "n",
        "counts",
    } == set(metrics["strictness"][0])
    assert {"domain", "dimension", "sd_of_means", "min_mean", "max_mean", "n_reviewers"} == set(
        metrics["strictness_spread"][0]
    )
    assert {
        "domain",
        "dimension",
        "reviewer_a",
        "reviewer_b",
        "alpha",
        "n_items",
        "jaccard",
    } == set(metrics["pairwise"][0])
    assert {
        "idea_id",
        "idea",
        "title",
        "domain",
        "dimension",
        "n_scores",
        "raw_spread",
        "raw_sd",
        "z_spread",
    } == set(metrics["contested"][0])
    assert {"domain", "dimension", "single_reliability", "k_for_075", "k_for_090", "curve"} <= set(
        metrics["panel"][0]
    )


def test_there_is_a_cell_for_every_domain_dimension_and_background(synthetic):
    _, metrics = synthetic
    keys = {(c["domain"], c["dimension"], c["background"]) for c in metrics["cells"]}
    assert keys == {
        (d, m, b)
        for d in ["dom0", "dom1", "__all__"]
        for m in ["d0", "d1", "d2"]
        for b in ["__all__", "technical", "business"]
    }


def test_cell_alphas_equal_the_reference_package_on_the_pivoted_scores(synthetic):
    frame, metrics = synthetic
    for domain in ["dom0", "__all__"]:
        for bg in ["__all__", "business"]:
            sub = frame[frame["dimension"] == "d1"]
            if domain != "__all__":
                sub = sub[sub["domain"] == domain]
            if bg != "__all__":
                sub = sub[sub["background"] == bg]
            matrix = sub.pivot(index="reviewer", columns="idea_id", values="score").to_numpy()
            ref = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
            got = cell(metrics, domain, "d1", bg)["fine"]
            assert got["alpha"] == pytest.approx(ref, abs=1e-9)
            assert got["ci_low"] < got["alpha"] < got["ci_high"]


def test_pairwise_alphas_equal_the_reference_package_on_co_rated_items(synthetic):
    frame, metrics = synthetic
    rows = [p for p in metrics["pairwise"] if p["domain"] == "dom1" and p["dimension"] == "d0"]
    assert rows
    for p in rows[:5]:
        sub = frame[
            (frame["dimension"] == "d0")
            & (frame["domain"] == "dom1")
            & frame["reviewer"].isin([p["reviewer_a"], p["reviewer_b"]])
        ]
        matrix = sub.pivot(index="reviewer", columns="idea_id", values="score")
        matrix = matrix.loc[:, matrix.notna().all()].to_numpy()
        assert matrix.shape[1] == p["n_items"]
        if p["alpha"] is not None:
            ref = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
            assert p["alpha"] == pytest.approx(ref, abs=1e-9)
        assert p["reviewer_a"] < p["reviewer_b"]


def test_the_same_seed_gives_the_same_intervals(synthetic):
    frame, metrics = synthetic
    again = compute_metrics(frame, scales=synthetic_scales(3), n_boot=200, seed=1)
    assert again["cells"] == metrics["cells"]


def test_every_level_runs_and_matches_the_plain_alpha():
    frame = frame_from(
        [("ann", i, "d", 1 + i % 5) for i in range(1, 13)]
        + [("bob", i, "d", 1 + (i * 2) % 5) for i in range(1, 13)]
        + [("cat", i, "d", 1 + (i + 1) % 5) for i in range(1, 13)]
    )
    matrix = frame.pivot(index="reviewer", columns="idea_id", values="score").to_numpy()
    for level in ["nominal", "ordinal", "interval", "ratio"]:
        metrics = compute_metrics(frame, level=level, n_boot=50)
        assert metrics["level"] == level
        assert cell(metrics)["fine"]["alpha"] == pytest.approx(
            krippendorff_alpha(matrix, level), abs=1e-12
        )


def test_gated_ratings_are_missing_not_zero_in_every_figure():
    rows = []
    for i in range(1, 13):
        rows.append(("ann", i, "d", 2 + i % 3))
        rows.append(("bob", i, "d", 2 + (i + i // 4) % 3))
        rows.append(("cat", i, "d", None if i % 2 else 3))  # cat is gated out on odd items
    frame = frame_from(rows)
    got = compute_metrics(frame, n_boot=0)
    dropped = compute_metrics(frame[frame["score"].notna()], n_boot=0)
    zeroed = compute_metrics(
        frame.assign(score=frame["score"].fillna(0), status="scored"), n_boot=0
    )
    for key in ["cells", "strictness", "strictness_spread", "pairwise", "panel", "contested"]:
        assert got[key] == dropped[key], key
        assert got[key] != zeroed[key], key
    assert got["n_ratings"] == 36 and got["n_scored"] == 30


def test_a_gated_status_wins_over_a_stray_score():
    frame = frame_from([("ann", 1, "d", 5, "gated"), ("ann", 2, "d", 1), ("bob", 2, "d", 2)])
    metrics = compute_metrics(frame, n_boot=0)
    (row,) = [
        r for r in metrics["strictness"] if r["reviewer"] == "ann" and r["domain"] == "__all__"
    ]
    assert row["n"] == 1 and row["mean"] == 1.0


def test_an_empty_frame_gives_empty_metrics():
    empty = frame_from([]).reindex(
        columns=[
            "idea_id",
            "idea",
            "patent_id",
            "domain",
            "reviewer_id",
            "reviewer",
            "background",
            "dimension",
            "score",
            "status",
            "rated_at",
        ]
    )
    metrics = compute_metrics(empty)
    json.dumps(metrics, allow_nan=False)
    assert metrics["cells"] == [] and metrics["n_ratings"] == 0


def test_all_gated_dimension_reads_as_too_little_data():
    frame = frame_from([("ann", 1, "d", None), ("bob", 1, "d", None)])
    metrics = compute_metrics(frame)
    json.dumps(metrics, allow_nan=False)
    c = cell(metrics)
    assert c["fine"]["alpha"] is None and c["reading"] == READ_TOO_LITTLE


def test_a_missing_column_is_named():
    frame = frame_from([("ann", 1, "d", 3)]).drop(columns=["background"])
    with pytest.raises(ValueError, match="background"):
        compute_metrics(frame)


def test_a_duplicate_rating_is_refused_naming_reviewer_and_idea():
    frame = frame_from([("ann", 1, "d", 3), ("ann", 1, "d", 4)])
    with pytest.raises(ValueError, match="'ann'.*'I1'"):
        compute_metrics(frame)


def test_readings_follow_the_numbers():
    assert reading(0.1, 0.7, 50, 10) == READ_SCALES
    assert reading(0.1, 0.2, 50, 10) == READ_DISAGREE
    assert reading(0.8, 0.7, 50, 10) == READ_AGREE
    assert reading(None, None, 0, 0) == READ_TOO_LITTLE
    assert reading(0.9, None, 3, 0) == READ_TOO_LITTLE


def test_a_jaccard_over_fewer_than_ten_pairs_gives_no_verdict():
    assert reading(None, 0.9, 3, 4) == READ_TOO_LITTLE == "Too few pairs to judge."
    assert reading(0.1, 0.9, 50, 4) == READ_SCORES_DIFFER_ONLY
    assert "too few pairs" in READ_SCORES_DIFFER_ONLY
    assert reading(0.1, 0.9, 50, MIN_PAIRS_FOR_VERDICT) == READ_SCALES


def test_panel_figures_follow_spearman_brown(synthetic):
    _, metrics = synthetic
    entry = next(p for p in metrics["panel"] if p["domain"] == "__all__")
    rel = entry["single_reliability"]
    assert 0 < rel < 1
    assert entry["curve"][0]["reliability"] == pytest.approx(rel)
    k75 = entry["k_for_075"]
    assert entry["curve"][k75 - 1]["reliability"] >= 0.75
    if k75 > 1:
        assert entry["curve"][k75 - 2]["reliability"] < 0.75
    assert set(entry["by_background"]) == {"technical", "business"}


def test_background_cells_only_use_that_backgrounds_reviewers():
    rows = []
    for i in range(1, 13):
        rows += [
            ("ann", i, "d", 1 + i % 5),
            ("cat", i, "d", 1 + i % 5),  # technical: agree
            ("bob", i, "d", 1 + (i * 3) % 5),
            ("dan", i, "d", 5 - i % 5),
        ]
    metrics = metrics_of(rows)
    assert cell(metrics, background="technical")["fine"]["alpha"] == 1.0
    assert cell(metrics, background="technical")["coarse"]["n_pairs"] == 1
    assert cell(metrics)["coarse"]["n_pairs"] == 6
    assert cell(metrics)["fine"]["alpha"] < 1.0


def test_the_analysis_package_imports_without_django():
    import subprocess
    import sys

    code = (
        "import sys, apps.disagreement.analysis as a; "
        "assert not any(m == 'django' or m.startswith('django.') for m in sys.modules), "
        "'django imported'"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        cwd=str(__import__("pathlib").Path(__file__).resolve().parents[3]),
    )
    assert result.returncode == 0, result.stderr


def test_category_scores_are_left_out_like_gated_ones_by_default():
    rows = []
    for i in range(1, 13):
        rows += [("ann", i, "need", i % 4), ("bob", i, "need", (i + 1) % 4)]
    frame = frame_from(rows)
    kept = compute_metrics(frame, n_boot=0, categories={"need": [0]}, include_categories=True)
    assert kept["cells"] == compute_metrics(frame, n_boot=0)["cells"]
    left_out = compute_metrics(frame, n_boot=0, categories={"need": [0]})
    no_zeros = compute_metrics(frame[frame["score"] != 0], n_boot=0)
    assert left_out["cells"] == no_zeros["cells"]
    assert left_out["strictness"] == no_zeros["strictness"]
    assert kept["cells"] != left_out["cells"]
    assert left_out["n_scored"] == no_zeros["n_scored"] < kept["n_scored"]


def test_background_groups_are_whatever_labels_the_reviewers_have():
    rows = []
    for i in range(1, 13):
        rows += [
            ("ann", i, "d", 1 + i % 5),
            ("cat", i, "d", 1 + i % 5),
            ("bob", i, "d", 1 + (i * 3) % 5),
            ("dan", i, "d", 5 - i % 5),
        ]
    frame = frame_from(rows)
    frame["background"] = frame["reviewer"].map(
        {"ann": "literature", "cat": "literature", "bob": "crowd", "dan": ""}
    )
    metrics = compute_metrics(frame, n_boot=0)
    assert metrics["backgrounds"] == ["crowd", "literature"]
    assert {c["background"] for c in metrics["cells"]} == {"__all__", "crowd", "literature"}
    assert cell(metrics, background="literature")["fine"]["alpha"] == 1.0
    assert cell(metrics, background="crowd")["fine"]["alpha"] is None  # one reviewer
    (entry,) = [p for p in metrics["panel"] if p["domain"] == "__all__"]
    assert set(entry["by_background"]) == {"crowd", "literature"}
