"""A small judge study end to end on a real Celery worker, judged by the real local model."""

from __future__ import annotations

import pytest

from apps.judges import services
from apps.judges.models import JudgeConfig, JudgeFinal, JudgePrediction, JudgeRun
from tests.judges.helpers import make_ideas, rate
from tests.workers import CeleryWorker, purge_queue, wait_for

# serialized_rollback: see tests/judges/test_worker.py.
pytestmark = [
    pytest.mark.llm,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def test_a_small_study_on_the_local_model_ends_with_every_target_predicted_or_failed(
    llm_server, domain, settings
):
    from tests.factories import ReviewerFactory

    # The study checks each configuration's endpoint against the running settings too.
    settings.LLM_ALLOWED_BASE_URLS = [llm_server.base_url]
    ideas = make_ideas(domain, 3)
    rita = ReviewerFactory(username="rita", first_name="Rita", profile=[domain])
    otto = ReviewerFactory(username="otto", first_name="Otto", profile=[domain])
    # Only Rita has the history a study needs (2); Otto's one rating is an aggregate example.
    # 3 targets x 3 configurations = 9 judgments, a few seconds each on an idle CPU.
    rate(rita, ideas, "innovativeness", lambda i: 1 + i % 3)
    rate(otto, ideas[:1], "innovativeness", lambda i: 4)
    options = dict(
        backend="openai",
        base_url=llm_server.base_url,
        model=llm_server.model,
        seeds=1,
        concurrency=2,
        min_history=2,
    )
    configs = [
        JudgeConfig.objects.create(name="zero", kind="zero_shot", shots=[0], **options),
        JudgeConfig.objects.create(name="agg", kind="aggregate", shots=[1], **options),
        JudgeConfig.objects.create(name="pers", kind="personalized", shots=[1], **options),
    ]
    purge_queue()
    worker = CeleryWorker(
        extra_env={
            # The worker refuses endpoints that are neither LLM_BASE_URL nor allowed (SSRF guard).
            "LLM_ALLOWED_BASE_URLS": llm_server.base_url,
            "LLM_MAX_CONCURRENCY": "2",
            "LLM_TIMEOUT_SECONDS": "120",
        }
    )
    worker.start()
    try:
        run, _ = services.judge_study_start(
            by=None,
            domain=domain,
            dimensions=["innovativeness"],
            configs=configs,
            shots=[0, 1],
            seeds=1,
            min_history=2,
        )
        wait_for(
            lambda: JudgeRun.objects.get(id=run.id).status in ("done", "failed"),
            timeout=300,
            interval=1.0,
            message=worker.log()[-3000:],
        )
    finally:
        worker.stop()
    run.refresh_from_db()
    assert run.status == "done", run.error
    predictions = list(JudgePrediction.objects.filter(run=run))
    assert run.total == len(predictions) > 0
    for p in predictions:
        # Predicted (a score on the 1-5 scale) or failed with its reason: nothing in between.
        assert (p.score is not None and 1 <= p.score <= 5 and p.error == "") or (
            p.score is None and p.error.startswith("no usable reply")
        ), (p.score, p.error, p.raw_reply)
        assert p.backend == "openai" and p.model == llm_server.model
        assert p.prompt_tokens > 0 and p.attempts >= 1
    assert sum(p.score is not None for p in predictions) >= len(predictions) // 2
    assert JudgeFinal.objects.filter(run=run).exists()
