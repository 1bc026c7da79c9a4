from apps.judges.models import JudgeFinal, JudgeRun
from apps.judges.selectors import unrated_predictions
from apps.screening.models import Dimension
from tests.factories import IdeaFactory


def test_predicted_shortlists_list_unkept_targets_last(reviewer, domain):
    run = JudgeRun.objects.create(
        purpose=JudgeRun.Purpose.PREDICTION,
        status=JudgeRun.Status.DONE,
        reviewer=reviewer,
        domain=domain,
        dimensions=["innovativeness"],
        scope_key="prediction-test",
    )
    dimension = Dimension.objects.get(rubric__is_default=True, key="innovativeness")
    for external_id, score, confidence in [("a", None, None), ("b", 3, 90), ("c", 5, 60)]:
        JudgeFinal.objects.create(
            run=run,
            kind="personalized",
            k=9,
            reviewer=reviewer,
            dimension=dimension,
            idea=IdeaFactory(external_id=external_id, patent__domain=domain),
            score=score,
            confidence=confidence,
        )
    ordered = [f.idea.external_id for f in unrated_predictions(reviewer_id=reviewer.id)]
    assert ordered == ["c", "b", "a"]
