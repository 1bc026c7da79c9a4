"""Builders for judge tests: a domain with several reviewers who each rated many ideas.

Ratings are written directly (as an import would) unless a test is about the rating form's
trigger, which goes through apps.screening.services.ratings.rating_submit.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings

from apps.judges.models import JudgeConfig, JudgeRun
from apps.screening.models import Dimension, Rating, Rubric
from tests.factories import AssignmentFactory, IdeaFactory, PatentFactory, ReviewerFactory

TOPICS = [
    ("speech denoising", "A headset that removes machine noise for factory workers."),
    ("contract parsing", "A service that extracts obligations from supplier contracts."),
    ("battery analytics", "A dashboard predicting battery failures in delivery fleets."),
    ("crop imaging", "A drone camera that flags diseased crops for large farms."),
    ("invoice matching", "Software that matches invoices to purchase orders automatically."),
    ("medical records", "An EMR module adapting screens to each clinician's role."),
    ("chat summaries", "A tool that summarises customer chats for support managers."),
    ("code review", "A bot that flags risky code changes in enterprise repositories."),
]


def dimension(key: str) -> Dimension:
    return Dimension.objects.get(rubric=Rubric.objects.get(is_default=True), key=key)


def make_ideas(domain, n: int) -> list:
    ideas = []
    for i in range(n):
        topic, text = TOPICS[i % len(TOPICS)]
        patent = PatentFactory(
            domain=domain,
            title=f"Patent on {topic} {i}",
            abstract=f"A patented method for {topic}, variant {i}.",
        )
        ideas.append(
            IdeaFactory(patent=patent, title=f"{topic.title()} product {i}", description=text)
        )
    return ideas


def rate(reviewer, ideas, dim_key: str, score_of: Callable[[int], int]) -> list[Rating]:
    dim = dimension(dim_key)
    return [
        Rating.objects.create(
            reviewer=reviewer,
            idea=idea,
            dimension=dim,
            status="scored",
            score=score_of(i),
            source="import",
        )
        for i, idea in enumerate(ideas)
    ]


def small_configs(backend: str = "local", **extra) -> list[JudgeConfig]:
    """Fast configurations for tests: 1 seed, k in {0, 2}, the backend's default threshold."""
    threshold = (
        settings.JUDGE_LOCAL_CONFIDENCE_THRESHOLD
        if backend == "local"
        else settings.JUDGE_LLM_CONFIDENCE_THRESHOLD
    )
    opts = {"backend": backend, "seeds": 1, "confidence_threshold": threshold, **extra}
    return [
        JudgeConfig.objects.create(name="zero", kind="zero_shot", shots=[0], **opts),
        JudgeConfig.objects.create(name="agg", kind="aggregate", shots=[2], **opts),
        JudgeConfig.objects.create(name="pers", kind="personalized", shots=[2], **opts),
    ]


def reviewer_with_assignments(domain, username: str, ideas):
    user = ReviewerFactory(username=username, first_name=username.title(), profile=[domain])
    for idea in ideas:
        AssignmentFactory(reviewer=user, idea=idea)
    return user


def compute_alignment(run_ids=None) -> list:
    """Queue the alignment snapshots these runs feed (all finished runs by default) and compute
    them in this process, as the worker would: pages and the API read only stored snapshots."""
    from apps.judges.models import AlignmentSnapshot, JudgeRun
    from apps.judges.services.alignment import alignment_runs_finished, alignment_snapshot_compute

    if run_ids is None:
        run_ids = list(JudgeRun.objects.filter(status="done").values_list("id", flat=True))
    alignment_runs_finished(run_ids=run_ids)
    queued = AlignmentSnapshot.objects.filter(status=AlignmentSnapshot.Status.QUEUED)
    return [alignment_snapshot_compute(snapshot_id=s.id) for s in queued]


def stored_predictions(domain, reviewer, *, ideas: int, ks: tuple[int, ...] = (2, 9)) -> JudgeRun:
    """A finished prediction run for `reviewer` holding ideas x dimensions x ks finals, written
    in bulk (tests and bench/bench_predictions_api.py need thousands, fast)."""
    from django.utils import timezone

    from apps.catalog.models import Idea, Patent
    from apps.judges.models import JudgeFinal

    rubric = domain.rubric or Rubric.objects.get(is_default=True)
    dims = list(Dimension.objects.filter(rubric=rubric))
    tag = f"{domain.key}-{reviewer.username}"
    patents = Patent.objects.bulk_create(
        [
            Patent(external_id=f"SP-{tag}-{i}", domain=domain, title=f"Patent {i}")
            for i in range(max(1, ideas // 10))
        ]
    )
    rows = Idea.objects.bulk_create(
        [
            Idea(external_id=f"SI-{tag}-{i:06d}", patent=patents[i % len(patents)], title=f"I{i}")
            for i in range(ideas)
        ]
    )
    config = JudgeConfig.objects.get_or_create(
        name="stored", defaults={"kind": "personalized", "backend": "local"}
    )[0]
    run = JudgeRun.objects.create(
        purpose=JudgeRun.Purpose.PREDICTION,
        status=JudgeRun.Status.DONE,
        reviewer=reviewer,
        domain=domain,
        dimensions=[d.key for d in dims],
        scope_key=f"stored|{tag}",
        finished_at=timezone.now(),
    )
    run.configs.add(config)
    JudgeFinal.objects.bulk_create(
        [
            JudgeFinal(
                run=run,
                kind="personalized",
                k=k,
                reviewer=reviewer,
                idea=idea,
                dimension=dim,
                score=dim.scale_min + (n % (dim.scale_max - dim.scale_min + 1)),
                confidence=50 + n % 50,
                reason="stored for a test",
                kept=1,
            )
            for n, (idea, dim, k) in enumerate(
                (idea, dim, k) for idea in rows for dim in dims for k in ks
            )
        ],
        batch_size=5000,
    )
    return run
