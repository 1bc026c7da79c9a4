"""Level versus judgment: on a frame where the judge only predicts each reviewer's usual level,
pooled alpha looks good, the per-reviewer alpha does not, the lift over the level-only baseline
is nil, and the engine, the page and the API say the judge adds nothing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from django.urls import reverse
from django.utils import timezone

from apps.judges.engine import alignment
from apps.judges.engine.panel import level_only
from apps.judges.models import AlignmentSnapshot
from apps.judges.presenters import EMPTY_RESULT

SCALES = {"innovativeness": (1, 5)}


def _frame(judge: str) -> pd.DataFrame:
    """Four reviewers with different levels (1.5 to 4.5), 30 targets each; the truth varies
    around each level. `level`: the judge predicts the level (what the baseline does);
    `order`: it also gets the order within each reviewer right."""
    rng = np.random.default_rng(0)
    rows = []
    for reviewer, centre in enumerate([1.5, 2.5, 3.5, 4.5]):
        for idea in range(30):
            truth = int(np.clip(round(centre + rng.normal(0, 0.8)), 1, 5))
            base = int(np.clip(round(centre), 1, 5))
            pred = base if judge == "level" else truth
            rows.append((reviewer, idea, truth, pred, base))
    frame = pd.DataFrame(rows, columns=["reviewer_id", "idea_id", "truth", "pred", "base"])
    return frame.assign(
        dimension="innovativeness", kind="personalized", k=9, kept=1, discarded=0, domain="d"
    ).astype({"truth": float, "pred": float, "base": float})


def test_a_judge_that_only_matches_levels_scores_on_pooled_alpha_but_adds_nothing():
    (row,) = alignment.alignment_curve(_frame("level"), scales=SCALES)
    assert row["alpha"] > 0.4  # pooled alpha rewards the levels
    assert row["baseline_alpha"] == pytest.approx(row["alpha"])
    assert row["lift"] == pytest.approx(0.0) and row["adds_nothing"]
    assert "adds nothing beyond the reviewer's usual level" in row["lift_text"]
    assert row["within_alpha"] is None or row["within_alpha"] < 0.1
    verdicts = alignment.reviewer_verdicts(_frame("level"), scales=SCALES)
    assert {v["level"] for v in verdicts} == {"not_yet"}


def test_a_judge_that_orders_ideas_within_each_reviewer_has_a_lift_with_its_interval():
    (row,) = alignment.alignment_curve(_frame("order"), scales=SCALES)
    assert row["within_alpha"] == pytest.approx(1.0)
    assert row["lift"] > 0 and row["lift_low"] > 0 and not row["adds_nothing"]
    assert row["lift_low"] <= row["lift"] <= row["lift_high"]
    assert "beats the level-only baseline" in row["lift_text"]


def test_the_baseline_is_the_rounded_mean_of_the_examples():
    assert level_only([1, 2]) == 2 and level_only([1, 1, 2]) == 1 and level_only([]) is None


@pytest.mark.django_db
def test_the_page_and_the_api_say_a_level_only_judge_adds_nothing(client, manager):
    frame = _frame("level")
    result = {
        **EMPTY_RESULT,
        "n_finals": len(frame),
        "curve": alignment.alignment_curve(frame, scales=SCALES),
        "verdicts": [
            {**v, "reviewer": f"r{v['reviewer_id']}"}
            for v in alignment.reviewer_verdicts(frame, scales=SCALES)
        ],
    }
    AlignmentSnapshot.objects.create(
        scope="auto", status="done", result=result, per_reviewer={}, computed_at=timezone.now()
    )
    client.force_login(manager)
    page = client.get(reverse("judges:alignment")).content.decode()
    assert "adds nothing beyond the level" in page
    assert "Pooled or per reviewer?" in page
    assert "adds nothing beyond the reviewer&#x27;s usual level" in page  # the verdicts say why
    # The rule is stated beside the verdicts, from its one home.
    from html import escape

    assert 'id="verdict-rule"' in page and escape(alignment.VERDICT_RULE) in page
    api = client.get(reverse("judges-api-alignment")).json()
    (row,) = api["curve"]
    assert row["adds_nothing"] is True and row["lift_status"] == "nil"
    assert "adds nothing" in row["lift_text"]


def _with_gaps(frame: pd.DataFrame) -> pd.DataFrame:
    """Some targets without a truth (unrated) or a prediction (discarded), rows shuffled."""
    rng = np.random.default_rng(1)
    frame = frame.copy()
    frame.loc[rng.random(len(frame)) < 0.15, "truth"] = np.nan
    frame.loc[rng.random(len(frame)) < 0.15, "pred"] = np.nan
    return frame.iloc[rng.permutation(len(frame))]


def test_per_reviewer_alphas_count_only_targets_with_a_truth_and_a_prediction():
    from apps.judges.engine.alignment.figures import alpha
    from apps.judges.engine.level import reviewer_alphas

    frame = _with_gaps(_frame("order").assign(pred=lambda f: np.clip(f["truth"] + 1, 1, 5)))
    got = reviewer_alphas(frame, [1.0, 2.0, 3.0, 4.0, 5.0], alpha)
    assert sorted(got) == [0, 1, 2, 3]
    for reviewer, (a, n) in got.items():
        mine = frame[frame["reviewer_id"] == reviewer].dropna(subset=["truth", "pred"])
        assert n == len(mine) < 30
        want = alpha(
            np.vstack([mine["truth"].to_numpy(), mine["pred"].to_numpy()]),
            values=[1.0, 2.0, 3.0, 4.0, 5.0],
        )
        assert a == pytest.approx(want, abs=1e-12)


def test_the_curve_does_not_depend_on_the_order_of_the_rows():
    frame = _with_gaps(_frame("order"))
    (shuffled,) = alignment.alignment_curve(frame, scales=SCALES)
    (ordered,) = alignment.alignment_curve(
        frame.sort_values(["reviewer_id", "idea_id"]), scales=SCALES
    )
    assert (
        shuffled["n"] == ordered["n"] == int((frame["truth"].notna() & frame["pred"].notna()).sum())
    )
    for key in ("alpha", "within_alpha", "judge_alpha", "baseline_alpha", "lift", "lift_low"):
        assert shuffled[key] == pytest.approx(ordered[key], abs=1e-12), key
