import math

import pandas as pd
import pytest

from apps.disagreement.selectors import idea_ratings_detail
from apps.screening.models import Rating
from apps.screening.selectors.frame import FRAME_COLUMNS, rating_frame, rubric_scales
from apps.screening.services.ratings import rating_decline, rating_submit
from tests.factories import AssignmentFactory, IdeaFactory

pytestmark = pytest.mark.django_db

PASSING = {
    "specificity": 4,
    "technical_validity": 3,
    "innovativeness": 2,
    "competitive_advantage": 3,
    "need_validity": 2,
    "market_size": 1,
}


def test_it_returns_one_row_per_rating_with_the_contract_columns(reviewer, idea):
    rating_submit(reviewer=reviewer, idea=idea, scores=PASSING, rationales={"specificity": "clear"})
    frame = rating_frame()
    assert list(frame.columns) == FRAME_COLUMNS
    assert len(frame) == 6
    row = frame.set_index("dimension").loc["specificity"]
    assert row["score"] == 4.0 and row["status"] == "scored"
    assert row["idea"] == idea.external_id and row["idea_id"] == idea.id
    assert row["patent_id"] == idea.patent_id and row["domain"] == "nlp"
    assert row["reviewer"] == "rita" and row["background"] == "technical"
    assert isinstance(frame["rated_at"].dtype, pd.DatetimeTZDtype)
    assert abs(
        frame["rated_at"].iloc[0] - pd.Timestamp(Rating.objects.first().updated_at)
    ) < pd.Timedelta("1ms")


def test_it_gives_gated_and_declined_ratings_nan_never_zero(reviewer, other_reviewer, idea):
    # Specificity 2 fails the gate: every downstream dimension is "not rated by design".
    rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 2})
    rating_decline(reviewer=other_reviewer, idea=idea, reason="cannot read the claims")
    frame = rating_frame()
    mine = frame[frame["reviewer"] == "rita"].set_index("dimension")
    assert mine.loc["specificity", "score"] == 2.0
    gated = mine.drop(index="specificity")
    assert set(gated["status"]) == {"gated"}
    assert gated["score"].isna().all()
    declined = frame[frame["reviewer"] == "otto"]
    assert len(declined) == 6 and set(declined["status"]) == {"declined"}
    assert declined["score"].isna().all()
    assert (frame["score"] == 0).sum() == 0


def test_it_filters_by_domain_dimension_background_and_date(reviewer, idea, other_domain, outsider):
    rating_submit(reviewer=reviewer, idea=idea, scores=PASSING)
    far_idea = IdeaFactory(patent__domain=other_domain)
    AssignmentFactory(reviewer=outsider, idea=far_idea)
    rating_submit(reviewer=outsider, idea=far_idea, scores={"specificity": 1})
    assert set(rating_frame(domain="materials")["reviewer"]) == {"oscar"}
    assert set(rating_frame(dimension="market_size")["dimension"]) == {"market_size"}
    assert len(rating_frame(dimension="market_size")) == 2
    assert rating_frame(background="business").empty
    today = pd.Timestamp.now(tz="UTC").date()
    assert len(rating_frame(since=today, until=today)) == 12
    assert rating_frame(until=today - pd.Timedelta(days=1)).empty


def test_it_reads_the_frame_in_a_constant_number_of_queries(planted, django_assert_max_num_queries):
    with django_assert_max_num_queries(4):
        frame = rating_frame()
    assert len(frame) == len(planted)


def test_it_returns_an_empty_frame_with_the_contract_columns_when_there_are_no_ratings(db):
    frame = rating_frame()
    assert frame.empty and list(frame.columns) == FRAME_COLUMNS


def test_it_lists_every_dimension_scale(db):
    scales = rubric_scales()
    assert scales["innovativeness"] == (1, 5)
    assert scales["need_validity"] == (0, 3)


def test_the_drill_down_standardises_each_score_on_its_reviewers_own_scale(planted):
    idea = planted[0].idea
    rows = idea_ratings_detail(idea=idea)
    assert [r.key for r in rows][0] == "specificity"
    scored = [s for r in rows for s in r.scores if s.status == "scored"]
    assert scored and all(s.z is None or math.isfinite(s.z) for s in scored)
    assert any(s.z is not None for s in scored)


def test_the_packed_read_on_postgresql_is_the_portable_read_and_a_foreign_status_falls_back(
    reviewer, other_reviewer, idea
):
    from apps.screening.selectors import frame as frames

    rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 2})  # gated: NaN scores
    rating_decline(reviewer=other_reviewer, idea=idea, reason="conflict of interest")
    qs = frames.ratings_queryset()

    def by_rating(columns):
        return (
            pd.DataFrame(columns)
            .sort_values(["reviewer_id", "dimension_id"])
            .reset_index(drop=True)
        )

    packed, portable = (
        by_rating(frames._rating_columns(qs)),
        by_rating(frames._rating_columns_portable(qs)),
    )
    assert len(packed) == 12 and set(packed["status"]) == {"scored", "gated", "declined"}
    # The times too, to the microsecond the database keeps.
    pd.testing.assert_frame_equal(packed, portable)
    stamps = sorted(Rating.objects.values_list("updated_at", flat=True))
    assert sorted(frames.rating_frame()["rated_at"]) == [pd.Timestamp(t) for t in stamps]
    # A status written around the model's choices is still read as it is.
    Rating.objects.filter(reviewer=other_reviewer).update(status="withdrawn")
    assert set(frames._rating_columns(qs)["status"]) == {"scored", "gated", "withdrawn"}
    # The packed read honours the queryset's filters (server-side parameters).
    one_dimension = frames._rating_columns(frames.ratings_queryset(dimension="specificity"))
    assert len(one_dimension["idea_id"]) == 2
    assert len(frames._rating_columns(frames.ratings_queryset(domain="no-such"))["idea_id"]) == 0


def test_a_frame_of_some_columns_is_those_columns_of_the_whole_frame(reviewer, idea):
    rating_submit(reviewer=reviewer, idea=idea, scores=PASSING)
    whole = rating_frame()
    some = ["rated_at", "reviewer", "idea_id", "status", "score", "dimension"]
    pd.testing.assert_frame_equal(rating_frame(columns=some), whole[some])
    assert list(rating_frame(columns=["score"]).columns) == ["score"]
    with pytest.raises(ValueError, match="rating_score"):
        rating_frame(columns=["score", "rating_score"])
    Rating.objects.all().delete()
    assert list(rating_frame(columns=some).columns) == some
