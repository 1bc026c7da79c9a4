"""Fixtures for judge tests.

Top part (judges core): `fake_llm`, a real HTTP server speaking the OpenAI wire format
(tests/fake_llm.py), the only stand-in allowed, since the LLM is a paid outside service.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apps.judges import services
from tests.fake_llm import FakeLLM
from tests.judges.helpers import compute_alignment, small_configs


@pytest.fixture
def fake_llm(settings) -> Iterator[FakeLLM]:
    """A fresh fake OpenAI-compatible server per test; `fake_llm.base_url` ends in /v1. It is
    an allowed LLM endpoint (LLM_ALLOWED_BASE_URLS) for the duration of the test."""
    server = FakeLLM().start()
    settings.LLM_ALLOWED_BASE_URLS = [*settings.LLM_ALLOWED_BASE_URLS, server.base_url]
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def broker():
    """The test Redis broker, emptied before and after: `broker.sent()` lists what was sent."""
    from tests.judges import broker as module

    module.purge()
    yield module
    module.purge()


# --- judges Django side (H8) below ------------------------------------------------------------


@pytest.fixture
def two_reviewers_history(domain):
    """Rita and Otto each scored 12 NLP ideas on innovativeness on opposite halves of the scale;
    two more ideas are unrated. Returns (rita, otto, ideas)."""
    from tests.factories import ReviewerFactory
    from tests.judges.helpers import make_ideas, rate

    ideas = make_ideas(domain, 14)
    rita = ReviewerFactory(username="rita", first_name="Rita", profile=[domain])
    otto = ReviewerFactory(username="otto", first_name="Otto", profile=[domain])
    rate(rita, ideas[:12], "innovativeness", lambda i: 1 + (i % 4) // 2)
    rate(otto, ideas[:12], "innovativeness", lambda i: 4 + (i % 4) // 2)
    return rita, otto, ideas


@pytest.fixture
def evaluated(domain, two_reviewers_history):
    """Rita's and Otto's judges evaluated leave-one-out, and Rita's unrated ideas predicted."""
    rita, otto, ideas = two_reviewers_history
    configs = small_configs(seeds=1)
    for reviewer in (rita, otto):
        run, _ = services.judge_run_request(
            purpose="loo_evaluation",
            domain=domain,
            dimensions=["innovativeness"],
            configs=configs,
            reviewer=reviewer,
            enqueue=False,
        )
        services.judge_run_execute(run_id=run.id)
    run, _ = services.judge_run_request(
        purpose="prediction",
        domain=domain,
        dimensions=["innovativeness"],
        configs=[configs[2]],
        reviewer=rita,
        enqueue=False,
    )
    services.judge_run_execute(run_id=run.id)
    # Pages read stored snapshots: compute them as the worker would after the runs finish.
    compute_alignment()
    return rita, otto, ideas


@pytest.fixture
def request_loo(domain):
    """`request_loo(reviewer, configs=None, enqueue=False)`: request (not execute) a reviewer's
    leave-one-out evaluation on innovativeness, with `small_configs()` unless configs are given;
    returns the run. The setup the alignment snapshot tests share."""

    def build(reviewer, configs=None, *, enqueue: bool = False):
        run, _ = services.judge_run_request(
            purpose="loo_evaluation",
            domain=domain,
            dimensions=["innovativeness"],
            configs=small_configs() if configs is None else configs,
            reviewer=reviewer,
            enqueue=enqueue,
        )
        return run

    return build


@pytest.fixture
def executed_loo(request_loo):
    """`executed_loo(reviewer, configs=None, notify=True)`: request and execute a leave-one-out
    evaluation; with notify, make the after-commit call the run engine makes (inside a test's
    transaction its on_commit hook never fires)."""
    from apps.judges.services.alignment import alignment_runs_finished

    def build(reviewer, configs=None, *, notify: bool = True):
        run = request_loo(reviewer, configs)
        services.judge_run_execute(run_id=run.id)
        if notify:
            alignment_runs_finished(run_ids=[run.id])
        return run

    return build
