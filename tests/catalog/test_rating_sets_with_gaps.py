"""A third-party rating set with gaps goes in as it is, through the product's own imports.

The rubric file attaches itself to its domain and has no gates; both dimensions are optional, so
raters may skip any of them (row absent or score empty). The metrics computed on what was stored
must equal the independent `krippendorff` package and a Jaccard written out here by hand.
"""

from __future__ import annotations

import io
from itertools import combinations

import krippendorff  # GPL-3.0 reference implementation: tests only
import numpy as np
import pandas as pd
import pytest

from apps.accounts.models import ReviewerProfile
from apps.catalog.models import Domain, Idea
from apps.core.errors import ApplicationError
from apps.disagreement.analysis import compute_metrics
from apps.screening.models import Rating, Rubric
from apps.screening.selectors.frame import rating_frame, rubric_scales

pytestmark = pytest.mark.django_db

RUBRIC = """
key: argq
name: Argument quality
domains: [arguments]
task: You judge short arguments written on a debate topic.
item_noun: argument
source_noun: topic
dimensions:
  - key: cogency
    name: Cogency
    optional: true
    scale: {min: 1, max: 5}
  - key: clarity
    name: Clarity
    optional: true
    scale: {min: 1, max: 5}
"""
REVIEWERS = {"r1": "crowd", "r2": "crowd", "r3": "Legal", "r4": "literature"}
N_ITEMS = 16
MIN_CO_RATED = 5


def _csv(frame: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue().encode()


@pytest.fixture
def gappy_set(run_import) -> pd.DataFrame:
    """Load the rubric, topics, untitled arguments, reviewers and a ratings file with gaps;
    return the ratings rows as written in the file."""
    run_import("rubric", RUBRIC, "argq.yaml")
    run_import(
        "patents",
        "external_id,domain,title\ntopic-1,arguments,School uniforms should be banned\n",
        "topics.csv",
    )
    ideas = pd.DataFrame(
        {
            "external_id": [f"debate-2019/train/topic-1/arg-{i:03d}" for i in range(N_ITEMS)],
            "patent": "topic-1",
            "description": [
                f"Argument number {i}: uniforms limit expression." for i in range(N_ITEMS)
            ],
        }
    )
    run_import("ideas", _csv(ideas), "arguments.csv")
    reviewers = "username,background\n" + "".join(f"{u},{b}\n" for u, b in REVIEWERS.items())
    run_import("reviewers", reviewers, "raters.csv")

    rng = np.random.default_rng(11)
    rows = []
    for i in range(N_ITEMS):
        quality = rng.integers(1, 6)
        for reviewer in REVIEWERS:
            present = [d for d in ("cogency", "clarity") if rng.random() > 0.2]
            if not present:
                continue
            for dim in present:
                score = int(np.clip(quality + rng.integers(-1, 2), 1, 5))
                text = "" if rng.random() < 0.15 else str(score)
                rows.append((ideas["external_id"][i], reviewer, dim, text))
    written = pd.DataFrame(rows, columns=["idea", "reviewer", "dimension", "score"])
    result = run_import("ratings", _csv(written), "ratings.csv")
    assert result.created > 0
    return written


def test_it_imports_unanswered_optional_dimensions_as_not_answered(gappy_set):
    pairs = gappy_set[["idea", "reviewer"]].drop_duplicates()
    scored = gappy_set[gappy_set["score"] != ""]
    assert Rating.objects.count() == 2 * len(pairs)
    assert Rating.objects.filter(status=Rating.Status.SCORED).count() == len(scored)
    assert Rating.objects.filter(status=Rating.Status.NOT_ANSWERED).count() == 2 * len(pairs) - len(
        scored
    )
    assert not Rating.objects.filter(status=Rating.Status.NOT_RATED_BY_DESIGN).exists()


def test_the_rubric_file_attaches_itself_to_its_domain(gappy_set):
    rubric = Rubric.objects.get(key="argq")
    assert Domain.objects.get(key="arguments").rubric == rubric
    assert (rubric.item_noun, rubric.source_noun) == ("argument", "topic")
    assert rubric.dimensions.filter(optional=True).count() == 2


def test_untitled_ideas_show_an_excerpt_and_keep_long_external_ids(gappy_set):
    idea = Idea.objects.get(external_id="debate-2019/train/topic-1/arg-003")
    assert idea.title == ""
    assert idea.display_title == "Argument number 3: uniforms limit expression."


def test_free_background_labels_reach_the_analytics_input(gappy_set):
    stored = dict(ReviewerProfile.objects.values_list("user__username", "background"))
    assert stored == {"r1": "crowd", "r2": "crowd", "r3": "legal", "r4": "literature"}
    frame = rating_frame()
    assert set(frame["background"]) == {"crowd", "legal", "literature"}
    assert frame.loc[frame["status"] == "unanswered", "score"].isna().all()


def _hand_jaccard(scored: pd.DataFrame) -> float:
    """Mean over reviewer pairs (with enough shared items) of the Jaccard of the items each
    scored strictly above their own median, restricted to the items both scored."""
    above: dict[str, set[str]] = {}
    rated: dict[str, set[str]] = {}
    for reviewer, sub in scored.groupby("reviewer"):
        median = sub["score"].median()
        above[reviewer] = set(sub.loc[sub["score"] > median, "idea"])
        rated[reviewer] = set(sub["idea"])
    values = []
    for a, b in combinations(sorted(rated), 2):
        shared = rated[a] & rated[b]
        if len(shared) < MIN_CO_RATED:
            continue
        sa, sb = above[a] & shared, above[b] & shared
        if sa | sb:
            values.append(len(sa & sb) / len(sa | sb))
    return sum(values) / len(values)


def test_metrics_on_the_gappy_set_equal_the_references(gappy_set):
    metrics = compute_metrics(
        rating_frame(), scales=rubric_scales(), n_boot=20, min_co_rated=MIN_CO_RATED
    )
    for dim in ("cogency", "clarity"):
        scored = gappy_set[(gappy_set["dimension"] == dim) & (gappy_set["score"] != "")].copy()
        scored["score"] = scored["score"].astype(float)
        matrix = scored.pivot(index="reviewer", columns="idea", values="score").to_numpy()
        reference = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
        cell = next(
            c
            for c in metrics["cells"]
            if (c["domain"], c["dimension"], c["background"]) == ("arguments", dim, "__all__")
        )
        assert cell["fine"]["alpha"] == pytest.approx(reference, abs=1e-12)
        assert cell["coarse"]["jaccard"] == pytest.approx(_hand_jaccard(scored), abs=1e-12)


def test_a_required_dimension_left_empty_is_still_refused(run_import, gappy_set):
    required = RUBRIC.replace(
        "optional: true\n    scale: {min: 1, max: 5}\n  - key: clarity",
        "scale: {min: 1, max: 5}\n  - key: clarity",
        1,
    )
    run_import("rubric", required, "argq.yaml")
    content = "idea,reviewer,dimension,score\ndebate-2019/train/topic-1/arg-000,r1,clarity,3\n"
    with pytest.raises(ApplicationError) as refused:
        run_import("ratings", content, "more.csv")
    assert "nothing was imported" in refused.value.message
    assert any("cogency is required" in e.message for e in refused.value.errors)
