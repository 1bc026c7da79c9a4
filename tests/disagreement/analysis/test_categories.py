"""Category levels ("not a B2B product") on small frames with answers worked out by hand."""

import json

import krippendorff  # GPL-3.0 reference implementation: tests and benchmarks only
import numpy as np
import pytest

from apps.disagreement.analysis import compute_metrics

from .helpers import cell, frame_from, metrics_of

# I1: two reviewers say "not B2B", one gives a 3 (the demo's most contested idea, 0 3 0).
# I2: both say "not B2B". I3: two grades. I4: one grade only.
ROWS = [
    ("ann", 1, "need", 0),
    ("bob", 1, "need", 3),
    ("cat", 1, "need", 0),
    ("ann", 2, "need", 0),
    ("bob", 2, "need", 0),
    ("ann", 3, "need", 2),
    ("bob", 3, "need", 3),
    ("ann", 4, "need", 1),
]
LEVELS = {"need": [0]}


def scope(metrics, domain="__all__"):
    (found,) = [s for s in metrics["categories"]["scopes"] if s["domain"] == domain]
    return found


def test_it_reports_how_many_category_answers_there_were_and_how_often_reviewers_split():
    metrics = metrics_of(ROWS, categories=LEVELS)
    json.dumps(metrics, allow_nan=False)
    s = scope(metrics)
    assert (s["n_scores"], s["n_category"]) == (8, 4)
    assert (s["n_items"], s["n_items_split"], s["n_items_all_category"]) == (3, 1, 1)
    assert s["share_split"] == pytest.approx(1 / 3)
    assert s["levels"] == [0] and metrics["categories"]["levels"] == {"need": [0]}
    assert scope(metrics, "nlp") == {**s, "domain": "nlp"}


def test_the_category_agreement_is_nominal_alpha_of_category_or_grade():
    metrics = metrics_of(ROWS, categories=LEVELS)
    # reviewers x ideas, 1 = category, 0 = grade, NaN = no score
    nan = np.nan
    data = [[1, 1, 0, 0], [0, 1, 0, nan], [1, nan, nan, nan]]
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert scope(metrics)["alpha_category"] == pytest.approx(ref, abs=1e-12)


def test_it_lists_the_ideas_split_between_category_and_grade():
    metrics = metrics_of(ROWS, categories=LEVELS)
    (split,) = metrics["categories"]["split_ideas"]
    assert (split["idea_id"], split["n_category"], split["n_grades"], split["grades"]) == (
        1,
        2,
        1,
        [3],
    )


def test_by_default_category_levels_are_left_out_of_the_ordinal_figures():
    frame = frame_from(ROWS)
    default = compute_metrics(frame, n_boot=0, categories=LEVELS)
    without_zeros = compute_metrics(frame[frame["score"] != 0], n_boot=0)
    assert default["categories_included"] is False
    assert default["cells"] == without_zeros["cells"]
    assert default["strictness"] == without_zeros["strictness"]
    # 0 3 0 is not a contested grade once "not B2B" is a category: one grade is left.
    assert [c["idea_id"] for c in default["contested"]] == [3]


def test_the_manager_can_count_category_levels_as_the_lowest_grade():
    frame = frame_from(ROWS)
    included = compute_metrics(frame, n_boot=0, categories=LEVELS, include_categories=True)
    assert included["categories_included"] is True
    assert included["cells"] == compute_metrics(frame, n_boot=0)["cells"]
    assert cell(included, dimension="need")["fine"]["n_scores"] == 7
    assert included["contested"][0]["idea_id"] == 1
    assert included["contested"][0]["raw_spread"] == 3.0
    # The split is reported either way.
    assert scope(included)["n_items_split"] == 1


def test_a_dimension_without_category_levels_has_no_category_report():
    rows = [(r, i, "spec", 1 + (i + k) % 4) for i in range(1, 6) for k, r in enumerate("ab")]
    metrics = metrics_of(rows, categories=LEVELS)
    assert metrics["categories"] == {"levels": {}, "scopes": [], "split_ideas": []}
