"""Scheduling of the automatic judge runs: one small task per rating change, bulk work in it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.judges import services
from apps.judges.models import JudgeHistory, JudgeRun, JudgeScheduleRequest
from apps.judges.tasks import judge_runs_schedule_task
from apps.screening.services.ratings import ratings_changed
from tests.factories import ReviewerFactory
from tests.judges.helpers import make_ideas, rate, small_configs

pytestmark = pytest.mark.django_db


def _reviewers_with_history(domain, ideas, n: int, *, start: int = 0) -> list:
    reviewers = []
    for i in range(start, start + n):
        reviewer = ReviewerFactory(username=f"sched{i}", profile=[domain])
        rate(reviewer, ideas, "innovativeness", lambda j, i=i: 1 + (i + j) % 4)
        rate(reviewer, ideas, "specificity", lambda j, i=i: 1 + (i + 2 * j) % 4)
        reviewers.append(reviewer)
    return reviewers


def test_a_rating_change_sends_one_scheduling_task_and_queues_no_run_in_the_request(
    domain, broker, django_capture_on_commit_callbacks
):
    small_configs(min_history=3)
    ideas = make_ideas(domain, 4)
    reviewers = _reviewers_with_history(domain, ideas, 5)
    with django_capture_on_commit_callbacks(execute=True):
        ratings_changed(reviewer_ids=[r.id for r in reversed(reviewers)] + [reviewers[0].id])
    assert JudgeRun.objects.count() == 0, "the request itself queues no run"
    sent = broker.sent(judge_runs_schedule_task.name)
    assert len(sent) == 1
    assert sent[0].kwargs["reviewer_ids"] == sorted(r.id for r in reviewers)
    # The scheduling is short work: the default queue, not behind long runs on "judges".
    assert sent[0].queue == "celery"


def test_scheduling_many_reviewers_costs_no_more_queries_than_scheduling_a_few(
    domain, broker, django_capture_on_commit_callbacks
):
    small_configs(min_history=3)
    ideas = make_ideas(domain, 4)
    few = _reviewers_with_history(domain, ideas, 2)
    many = _reviewers_with_history(domain, ideas, 12, start=2)

    with CaptureQueriesContext(connection) as q_few:
        with django_capture_on_commit_callbacks(execute=True):
            summary_few = services.judge_runs_schedule(reviewer_ids=[r.id for r in few])
    with CaptureQueriesContext(connection) as q_many:
        with django_capture_on_commit_callbacks(execute=True):
            summary_many = services.judge_runs_schedule(reviewer_ids=[r.id for r in many])

    # One evaluation and one prediction per reviewer, each over both dimensions
    assert summary_few["created"] == 2 * 2 and summary_many["created"] == 12 * 2
    assert len(q_many) <= len(q_few), [q["sql"][:120] for q in q_many.captured_queries]
    sent = broker.run_ids_sent()
    assert len(sent) == JudgeRun.objects.count() == 14 * 2
    # Every run has its configurations and its "queued" history entry, as one by one.
    run = JudgeRun.objects.get(
        reviewer=many[0], purpose="loo_evaluation", dimensions=["innovativeness", "specificity"]
    )
    assert {c.kind for c in run.configs.all()} == {"zero_shot", "aggregate", "personalized"}
    pred = JudgeRun.objects.get(
        reviewer=many[0], purpose="prediction", dimensions=["innovativeness", "specificity"]
    )
    assert {c.kind for c in pred.configs.all()} == {"personalized"}
    assert JudgeHistory.objects.filter(run=run, new_value={"status": "queued"}).count() == 1
    # Evaluations are sent before predictions, so the alignment dashboard fills first.
    purposes = dict(JudgeRun.objects.values_list("id", "purpose"))
    order = [purposes[rid] for rid in sent[2 * 2 :]]
    assert order == ["loo_evaluation"] * 12 + ["prediction"] * 12

    again = services.judge_runs_schedule(reviewer_ids=[r.id for r in few + many])
    assert again == {"created": 0, "reused": 14 * 2, "rerun_requested": 0, "requeued": 0}
    assert JudgeRun.objects.count() == 14 * 2


def test_scheduling_skips_predictions_outside_the_reviewers_profile_domains(
    domain, other_domain, broker
):
    small_configs(min_history=3)
    ideas = make_ideas(other_domain, 4)
    reviewer = ReviewerFactory(username="elsewhere", profile=[domain])
    rate(reviewer, ideas, "innovativeness", lambda j: 1 + j % 4)
    services.judge_runs_schedule(reviewer_ids=[reviewer.id])
    assert list(JudgeRun.objects.values_list("purpose", "domain_id")) == [
        ("loo_evaluation", other_domain.id)
    ]


def test_a_trigger_that_waited_while_its_scope_was_judged_queues_nothing_more(
    domain, two_reviewers_history, broker
):
    rita, _, _ = two_reviewers_history
    small_configs(min_history=5)
    changed_at = services.db_now()
    services.judge_runs_schedule(reviewer_ids=[rita.id], changed_at=changed_at)
    assert JudgeRun.objects.filter(reviewer=rita).count() == 2
    for run in JudgeRun.objects.filter(reviewer=rita):
        assert services.judge_run_execute(run_id=run.id) == "done"

    # A second trigger for the same change, handled after both runs started: they read it.
    late = services.judge_runs_schedule(reviewer_ids=[rita.id], changed_at=changed_at)
    assert late["created"] == 0 and JudgeRun.objects.filter(reviewer=rita).count() == 2
    # A change made after the runs started needs fresh runs.
    fresh = services.judge_runs_schedule(reviewer_ids=[rita.id], changed_at=services.db_now())
    assert fresh["created"] == 2 and JudgeRun.objects.filter(reviewer=rita).count() == 4


def test_a_reviewer_already_pending_costs_one_update_that_moves_the_change_forward(
    domain, broker, django_assert_num_queries
):
    reviewer = ReviewerFactory(username="pending", profile=[domain])
    assert services.judge_ratings_changed(reviewer_ids=[reviewer.id]) == 1
    first = JudgeScheduleRequest.objects.get(reviewer=reviewer).changed_at

    with django_assert_num_queries(1):
        assert services.judge_ratings_changed(reviewer_ids=[reviewer.id]) == 0

    # The pending task reads the newer change; no second task is sent.
    assert JudgeScheduleRequest.objects.get(reviewer=reviewer).changed_at > first
    assert len(broker.sent(judge_runs_schedule_task.name)) == 1


def test_every_reviewers_history_gaps_are_kept_until_a_rating_changes(
    two_reviewers_history, django_assert_max_num_queries
):
    """The managers' pages read the gaps from the cache; a rating change (the hook every rating
    write calls) makes the next read count again."""
    from apps.judges import selectors
    from apps.judges.services.scheduling import judge_ratings_changed
    from tests.judges.helpers import rate

    rita, _, ideas = two_reviewers_history

    def ritas(dimension: str) -> int:
        return next(
            g["n"]
            for g in selectors.history_gaps()
            if g["reviewer_id"] == rita.id and g["dimension"] == dimension
        )

    assert ritas("specificity") == 0
    rate(rita, ideas[:3], "specificity", lambda i: 2)  # no hook: the cached list stays
    with django_assert_max_num_queries(1):
        assert ritas("specificity") == 0
    judge_ratings_changed(reviewer_ids=[rita.id])
    assert ritas("specificity") == 3
    # One reviewer's gaps are always counted afresh.
    rate(rita, ideas[3:5], "specificity", lambda i: 2)
    assert (
        next(
            g["n"]
            for g in selectors.history_gaps(reviewer_ids=[rita.id])
            if g["dimension"] == "specificity"
        )
        == 5
    )


def test_dimensions_with_different_eligible_configurations_get_separate_runs(domain, broker):
    # The personalized judge needs 4 ratings; innovativeness has 4, specificity 3: the
    # evaluation covers both with the shared judges and innovativeness alone with all three.
    zero, agg, pers = small_configs(min_history=3)
    pers.min_history = 4
    pers.save()
    ideas = make_ideas(domain, 4)
    reviewer = ReviewerFactory(username="split", profile=[domain])
    rate(reviewer, ideas, "innovativeness", lambda j: 1 + j % 4)
    rate(reviewer, ideas[:3], "specificity", lambda j: 1 + j % 4)

    services.judge_runs_schedule(reviewer_ids=[reviewer.id])

    runs = {
        (r.purpose, tuple(r.dimensions)): {c.kind for c in r.configs.all()}
        for r in JudgeRun.objects.filter(reviewer=reviewer)
    }
    assert runs == {
        ("loo_evaluation", ("innovativeness",)): {"zero_shot", "aggregate", "personalized"},
        ("loo_evaluation", ("specificity",)): {"zero_shot", "aggregate"},
        ("prediction", ("innovativeness",)): {"personalized"},
    }
