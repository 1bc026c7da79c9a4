"""The Decide page: the board the snapshot task stores, searched, ordered and exported."""

import csv
import io

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Idea
from apps.disagreement.models import MetricSlice
from apps.judges.models import JudgeConfig, JudgeFinal, JudgeRun
from apps.screening.models import Dimension
from tests.disagreement.conftest import compute_snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def predicted(planted, domain):
    """A new NLP idea nobody has read, predicted for nlp-rev0 by a finished prediction run;
    plus a stale prediction for an idea nlp-rev0 has rated (it must not show)."""
    rev0 = User.objects.get(username="nlp-rev0")
    rated = Idea.objects.filter(patent__domain=domain).order_by("id").first()
    unread = Idea.objects.create(
        external_id="nlp-UNREAD", patent=rated.patent, title="Zebra translation for contracts"
    )
    innov = Dimension.objects.get(rubric__is_default=True, key="innovativeness")
    run = JudgeRun.objects.create(
        purpose=JudgeRun.Purpose.PREDICTION,
        domain=domain,
        reviewer=rev0,
        dimensions=["innovativeness"],
        scope_key="prediction|nlp-rev0|nlp|innovativeness",
        status=JudgeRun.Status.DONE,
        finished_at=timezone.now(),
    )
    for idea, score in ((unread, 5), (rated, 1)):
        JudgeFinal.objects.create(
            run=run,
            kind=JudgeConfig.Kind.PERSONALIZED,
            k=9,
            reviewer=rev0,
            idea=idea,
            dimension=innov,
            score=score,
            confidence=88,
            kept=3,
        )
    return {"unread": unread, "rated": rated, "snapshot": compute_snapshot()}


def board_rows(snapshot, domain="nlp", dimension="__all__"):
    (piece,) = MetricSlice.objects.filter(
        snapshot=snapshot, kind=MetricSlice.Kind.BOARD, domain=domain, dimension=dimension
    )
    return {r["idea"]: r for r in piece.rows}


def test_the_snapshot_stores_a_board_row_per_idea_and_dimension_with_predictions(predicted):
    snapshot = predicted["snapshot"]
    rows = board_rows(snapshot, dimension="innovativeness")
    assert len(rows) == Idea.objects.filter(patent__domain__key="nlp").count()
    unread = rows["nlp-UNREAD"]
    assert unread["n_scores"] == 0 and unread["z_mean"] is None
    assert unread["n_pred"] == 1 and unread["pred_mean"] == 5.0
    assert unread["preds"][0][0] == "nlp-rev0" and unread["preds"][0][2] == 88.0
    assert unread["pred_z_mean"] > 0  # a 5 is above nlp-rev0's own average
    # The reviewer rated this one: the stale prediction is not shown.
    assert rows[predicted["rated"].external_id]["n_pred"] == 0
    scored = predicted["rated"].ratings.filter(dimension__key="innovativeness", status="scored")
    assert len(rows[predicted["rated"].external_id]["scores"]) == scored.count() > 0


def test_managers_search_the_ideas_by_title(client, manager, predicted):
    client.force_login(manager)
    html = client.get(reverse("disagreement:decide") + "?domain=nlp&q=zebra").content.decode()
    assert "Zebra translation for contracts" in html
    assert "1 of 25 ideas match" in html
    assert "Idea 3 for NLP" not in html


def test_the_board_sorts_by_calibrated_mean_agreement_or_prediction(client, manager, predicted):
    client.force_login(manager)
    rows = board_rows(predicted["snapshot"], dimension="innovativeness")
    url = reverse("disagreement:export", args=["decide"]) + "?domain=nlp&dimension=innovativeness"

    def exported(sort):
        text = b"".join(client.get(f"{url}&sort={sort}").streaming_content).decode()
        return list(csv.DictReader(io.StringIO(text)))

    by_mean = exported("calibrated")
    means = [float(r["calibrated_mean_z"]) for r in by_mean if r["calibrated_mean_z"]]
    assert means == sorted(means, reverse=True) and len(means) == 24
    assert by_mean[-1]["idea"] == "nlp-UNREAD"  # no score: last
    assert by_mean[0]["ordered_by"] == "calibrated mean (z), highest first"
    by_agreement = exported("agreement")
    spreads = [r["calibrated_spread_z"] for r in by_agreement]
    defined = [float(v) for v in spreads if v]
    assert defined == sorted(defined) and len(defined) >= 20
    assert spreads[: len(defined)] == [
        r["calibrated_spread_z"] for r in by_agreement if r["calibrated_spread_z"]
    ]  # undefined spreads last
    by_prediction = exported("predicted")
    assert by_prediction[0]["idea"] == "nlp-UNREAD"
    assert by_prediction[0]["predictions"] == "nlp-rev0=5 (z +{:.2f}) @88%".format(
        rows["nlp-UNREAD"]["preds"][0][3]
    )


def test_the_page_shows_scores_and_predictions_for_one_dimension(client, manager, predicted):
    client.force_login(manager)
    html = client.get(
        reverse("disagreement:decide") + "?domain=nlp&dimension=innovativeness&sort=predicted"
    ).content.decode()
    assert "nlp-rev0 5 (+" in html and "@88%" in html
    assert "ordered by <strong>predicted score, highest first</strong>" in html


def test_the_board_defaults_to_the_first_domain_and_says_so(client, manager, predicted):
    client.force_login(manager)
    html = client.get(reverse("disagreement:decide")).content.decode()
    assert "Materials Chemistry · all dimensions" in html


def test_an_unknown_sort_falls_back_to_the_calibrated_mean(client, manager, predicted):
    client.force_login(manager)
    response = client.get(reverse("disagreement:decide") + "?sort=bogus&page=abc")
    assert response.status_code == 200
    assert "calibrated mean (z), highest first" in response.content.decode()
