"""The busy installation the archive tests restore: every carried table holds rows, and the
values the product accepted (issue 29) include what broke restores before archive version 4."""

from __future__ import annotations

import pytest
from django.db import connection
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea
from apps.dataio.services.archive.tables import installation_models, installation_tables
from apps.decisions.models import DecisionMark, DomainRouting, DomainShortlist, RoutingSuggestion
from apps.findings.models import FindingSnapshot
from apps.judges import services as judges
from apps.judges.models import JudgePrediction, JudgeRun
from apps.panels.models import (
    PanelChunk,
    PanelDebate,
    PanelRun,
    PanelTurn,
    Persona,
    PersonaDocument,
)
from apps.screening.models import Assignment, Dimension, Rating, RatingHistory
from apps.screening.services.ratings import rating_decline, rating_submit
from tests.factories import IdeaFactory, PatentFactory, ReviewerFactory
from tests.judges.helpers import small_configs

JUDGED_RUBRIC = """
key: stories
name: Story quality
domains: [fiction]
dimensions:
  - key: style
    scale: {min: 1, max: 4}
    optional: true
  - key: plot
    scale: {min: 1, max: 4}
    optional: true
"""


@pytest.fixture
def busy_installation(examples_loaded, run_import, admin, manager):
    """Everything a working installation holds: accounts of every role with passwords, form
    and API ratings with a formula-like rationale, a decline, a pending assignment, history
    written by a manager's import, and judges that ran (evaluations, a study, a prediction)."""
    alice = User.objects.get(username="alice")
    idea = Idea.objects.get(external_id="idea-004")
    Assignment.objects.get_or_create(reviewer=alice, idea=idea, defaults={"assigned_by": admin})
    scores = {"specificity": 4, "technical_validity": 3, "innovativeness": 2}
    scores |= {"need_validity": 2, "market_size": 1}
    answers = {"competitive_advantage": {"hard_to_imitate": True, "technology_essential": True}}
    rating_submit(
        reviewer=alice,
        idea=idea,
        scores=scores,
        answers=answers,
        rationales={"specificity": "=HYPERLINK(\"http://x\") and '=quoted' on purpose"},
    )
    rating_submit(
        reviewer=alice,
        idea=idea,
        scores={**scores, "innovativeness": 3},
        answers=answers,
        source=Rating.Source.API,
    )
    declined = Idea.objects.get(external_id="idea-005")
    Assignment.objects.get_or_create(reviewer=alice, idea=declined)
    rating_decline(reviewer=alice, idea=declined, reason="+1 conflict of interest")
    pending = Idea.objects.get(external_id="idea-006")
    Assignment.objects.get_or_create(reviewer=alice, idea=pending, defaults={"assigned_by": admin})
    RatingHistory.objects.filter(rating__reviewer=alice).update(changed_by=manager)

    # Judged ratings on a rubric without gates (optional dimensions), so the import takes them.
    run_import("rubric", JUDGED_RUBRIC, "stories.yaml", create_domains=True)
    nlp = Domain.objects.get(key="fiction")
    style = Dimension.objects.get(rubric__key="stories", key="style")
    plot = Dimension.objects.get(rubric__key="stories", key="plot")
    ideas = [
        IdeaFactory(
            external_id=f"story-{i}",
            patent=PatentFactory(external_id=f"prompt-{i}", domain=nlp),
            description=f"A story on theme {i % 5}, variant {i}.",
        )
        for i in range(14)
    ]
    rita = ReviewerFactory(username="rita", first_name="Rita", profile=[nlp])
    otto = ReviewerFactory(username="otto", first_name="Otto", profile=[nlp])
    for who, low in ((rita, 1), (otto, 3)):
        for i, story in enumerate(ideas[:12]):
            Rating.objects.create(
                reviewer=who, idea=story, dimension=style, score=low + (i % 4) // 2, source="api"
            )
            Rating.objects.create(
                reviewer=who, idea=story, dimension=plot, status="unanswered", source="api"
            )
    configs = small_configs(seeds=1)
    for who in (rita, otto):
        run, _ = judges.judge_run_request(
            purpose="loo_evaluation",
            domain=nlp,
            dimensions=["style"],
            configs=configs,
            reviewer=who,
            requested_by=admin,
            enqueue=False,
        )
        judges.judge_run_execute(run_id=run.id)
    study, _ = judges.judge_study_start(
        by=admin,
        domain=nlp,
        dimensions=["style"],
        configs=configs,
        shots=[0, 2],
        seeds=3,  # the predictions file several times the largest other one (the split test)
        enqueue=False,
    )
    judges.judge_run_execute(run_id=study.id)
    run, _ = judges.judge_run_request(
        purpose="prediction",
        domain=nlp,
        dimensions=["style"],
        configs=[configs[2]],
        reviewer=rita,
        enqueue=False,
    )
    judges.judge_run_execute(run_id=run.id)
    assert not JudgeRun.objects.exclude(status="done").exists()
    assert JudgePrediction.objects.exclude(example_rating_ids=[]).exists()
    _panels_and_routing(admin=admin, rita=rita, domain=nlp, ideas=ideas, style=style)


def _panels_and_routing(*, admin, rita, domain, ideas, style) -> PanelRun:
    """A persona panel that debated two ideas, from a document and a reviewer's history, and
    automatic routing switched on for the domain."""
    DomainRouting.objects.create(domain=domain, automatic=True, updated_by=admin)
    # Issue 29: these came back lost or changed before archive version 4.
    Domain.objects.create(key="no-patents-yet", name="A domain without patents")
    RoutingSuggestion.objects.create(
        reviewer=rita,
        idea=ideas[12],
        kind="boundary",
        value=0.7,
        reason="near the cut",
        status="accepted",
        decided_at=timezone.now(),
        decided_by=admin,
    )
    RoutingSuggestion.objects.create(reviewer=rita, idea=ideas[13], kind="random", reason="pick")
    # Issue 26: a shortlist size and a decision mark changed once, both versions kept.
    DomainShortlist.objects.create(domain=domain, size=7, updated_by=admin)
    for version, mark in ((1, "hold"), (2, "take_forward")):
        DecisionMark.objects.create(
            idea=ideas[0],
            domain=domain,
            version=version,
            mark=mark,
            note="=needs a second read" if version == 1 else "read twice",
            decided_by=admin,
            decided_at=timezone.now(),
            figures={"id": 3, "rank": version, "estimate": 0.5, "p_top_n": 0.25},
        )
    FindingSnapshot.objects.create(scope="t=0.6", threshold=0.6, status="done")
    PersonaDocument.objects.create(
        domain=domain,
        title="Reader survey",
        text="=Readers want plot twists.\nEditors want style.",
        uploaded_by=admin,
        status="done",
        stakeholders_found=2,
    )
    editor = Persona.objects.create(
        domain=domain,
        source="documents",
        name="Editor",
        description="Cares about style.",
        dimensions=["style"],
        evidence=[
            {"dimension": "style", "quote": "Editors want style.", "document": "Reader survey"}
        ],
        model="gemma",
    )
    like_rita = Persona.objects.create(
        domain=domain, source="reviewers", name="Like Rita", reviewer=rita, active=False
    )
    run = PanelRun.objects.create(
        domain=domain,
        persona_source="documents",
        dimension_keys=["style"],
        budget_tokens=5000,
        estimate={"calls": 6},
        model="gemma",
        status="done",
        requested_by=admin,
        calls=6,
        prompt_tokens=900,
        figures={"style": {"alpha_single": 0.4}},
    )
    run.personas.set([editor, like_rita])
    for idea in ideas[:2]:
        PanelChunk.objects.create(run=run, index=idea.pk, idea=idea, status="done")
        PanelDebate.objects.create(
            run=run,
            idea=idea,
            dimension=style,
            single_score=2,
            before_score=2.5,
            after_score=3.0,
            stop_reason="agreed",
            debate_rounds=1,
            rounds=[{str(editor.pk): 2, str(like_rita.pk): 3}],
            synthesis="Both liked the voice.",
        )
        for kind, member, rnd in (
            ("single", 0, 0),
            ("score", editor.pk, 0),
            ("revise", editor.pk, 1),
        ):
            PanelTurn.objects.create(
                run=run,
                idea=idea,
                dimension=style,
                kind=kind,
                member=member,
                round=rnd,
                score=3,
                reason="+voice",
                raw='{"score": 3}',
                prompt_fingerprint="abc",
                prompt_tokens=150,
                model="gemma",
            )
    return run


def every_table() -> dict[str, list[tuple]]:
    return installation_tables()


def empty_every_table() -> None:
    tables = [
        m._meta.db_table
        for m in installation_models()
        if m._meta.app_config.name.startswith("apps.")
    ]
    tables += ["authtoken_token", "django_session", "django_admin_log"]
    with connection.cursor() as cur:
        # The test's transaction holds deferred foreign-key checks; TRUNCATE needs them settled.
        cur.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cur.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
