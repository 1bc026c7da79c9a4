"""A backup restores an installation: export, empty every table, import, compare every table.

The round trip runs on the real PostgreSQL test database. "Empty" means every table of the
project truncated (accounts included): what comes back is only what the archive carries.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Callable
from typing import Any

import pytest
from django.apps import apps
from django.db import connection, models
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea
from apps.catalog.services.archive import installation_export, installation_import
from apps.core.csv_export import FORMULA_PREFIXES
from apps.core.errors import ApplicationError
from apps.decisions.models import DecisionMark, DomainRouting, DomainShortlist
from apps.judges import services as judges
from apps.judges.models import AlignmentSnapshot, JudgeConfig, JudgePrediction, JudgeRun
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
from tests.factories import PASSWORD, IdeaFactory, PatentFactory, ReviewerFactory, UserFactory
from tests.judges import broker
from tests.judges.helpers import small_configs

pytestmark = pytest.mark.django_db

PROJECT_APPS = (
    "accounts",
    "catalog",
    "screening",
    "judges",
    "disagreement",
    "decisions",
    "findings",
    "panels",
)
# Tables a restore does not bring back, each for a documented reason (docs/formats.md).
RECOMPUTED = {
    "disagreement.MetricSnapshot",
    "disagreement.MetricSlice",
    "judges.AlignmentSnapshot",
    "judges.ItemVector",
    "judges.JudgeRunPlan",
    "judges.JudgeRunChunk",
    "judges.JudgeScheduleRequest",
    "judges.JudgeShortlist",
    "judges.PanelShortlist",
    "decisions.DecisionSnapshot",
    "decisions.DecisionSlice",
    "decisions.RoutingSuggestion",
    "findings.FindingSnapshot",
    "findings.FindingSlice",
    # A panel run's work plan, like a judge run's: an unfinished run comes back failed.
    "panels.PanelChunk",
}
# Not carried (docs/formats.md): invitations, a record of mails sent; the per-domain item text
# choice (measured again by manage.py judge_item_parts).
NOT_CARRIED = {"accounts.Invitation", "judges.ItemTextChoice"}
# The import formats of the catalog carry no times: these rows get the restore's time.
TIMES_NOT_CARRIED = {"catalog.Patent", "catalog.Idea", "screening.Rubric"}

# How a row of each referenced table is named across two databases (ids differ; runs keep theirs).
NATURAL: dict[str, tuple[str, ...]] = {
    "accounts.User": ("username",),
    "catalog.Domain": ("key",),
    "catalog.Patent": ("external_id",),
    "catalog.Idea": ("external_id",),
    "screening.Rubric": ("key",),
    "screening.Dimension": ("rubric__key", "key"),
    "screening.Rating": ("idea__external_id", "reviewer__username", "dimension__key"),
    "judges.JudgeConfig": ("name",),
    "judges.JudgeRun": ("id",),
    "panels.Persona": ("id",),
    "panels.PanelRun": ("id",),
}
# Tables whose ids the archive keeps (rows name them by id: pages, snapshots, debate members).
KEEPS_IDS = {"judges.JudgeRun", "panels.PersonaDocument", "panels.Persona", "panels.PanelRun"}

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
        seeds=2,
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
    # Decisions (issue 26): a shortlist size and a mark changed once, both versions kept.
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


def _project_models() -> list[type[models.Model]]:
    return [
        m
        for label in PROJECT_APPS
        for m in apps.get_app_config(label).get_models()
        if not m._meta.proxy
    ]


def _namer() -> Callable[[str, Any], Any]:
    names: dict[str, dict[Any, tuple]] = {}
    for label, fields in NATURAL.items():
        model = apps.get_model(label)
        names[label] = {pk: tuple(rest) for pk, *rest in model.objects.values_list("pk", *fields)}

    def name(label: str, pk: Any) -> Any:
        return None if pk is None else names[label][pk]

    return name


def _table(model: type[models.Model], name: Callable[[str, Any], Any]) -> list[tuple]:
    """Every row of a table, every column, with references as natural keys; sorted."""
    label = model._meta.label
    rows = []
    for obj in model.objects.all():
        row: list[Any] = []
        for field in model._meta.concrete_fields:
            if field.primary_key and label not in KEEPS_IDS:
                continue
            if label in TIMES_NOT_CARRIED and field.name in ("created_at", "updated_at"):
                continue
            value = getattr(obj, field.attname)
            if field.is_relation:
                assert field.related_model is not None
                target = field.related_model._meta.label
                if target in NATURAL:
                    value = name(target, value)
                elif target == "accounts.User" or value is not None:
                    raise AssertionError(f"{label}.{field.name}: no natural key for {target}")
            elif label == "judges.JudgePrediction" and field.name == "example_rating_ids":
                value = [name("screening.Rating", r) for r in value]
            row.append(repr(value))
        for m2m in model._meta.many_to_many:
            target = m2m.related_model._meta.label  # type: ignore[union-attr]
            row.append(repr(sorted(name(target, r.pk) for r in getattr(obj, m2m.name).all())))
        rows.append(tuple(row))
    return sorted(rows)


def _every_table() -> dict[str, list[tuple]]:
    name = _namer()
    return {
        m._meta.label: _table(m, name)
        for m in _project_models()
        if m._meta.label not in RECOMPUTED | NOT_CARRIED
    }


def _empty_every_table() -> None:
    tables = [m._meta.db_table for m in _project_models()]
    tables += ["authtoken_token", "django_session", "django_admin_log"]
    with connection.cursor() as cur:
        # The test's transaction holds deferred foreign-key checks; TRUNCATE needs them settled.
        cur.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cur.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")


def test_every_project_table_is_restored_or_documented_as_recomputed(busy_installation):
    labels = {m._meta.label for m in _project_models()}
    assert RECOMPUTED | NOT_CARRIED <= labels
    tables = _every_table()
    assert set(tables) == labels - RECOMPUTED - NOT_CARRIED
    assert all(tables[t] for t in tables), [t for t in tables if not tables[t]]


def test_a_restore_into_an_empty_database_brings_every_table_back(
    busy_installation, client, django_capture_on_commit_callbacks
):
    before = _every_table()
    counts = {label: len(rows) for label, rows in before.items()}
    content = installation_export()
    _empty_every_table()
    assert not User.objects.exists() and not JudgeRun.objects.exists()
    broker.purge()

    with django_capture_on_commit_callbacks(execute=True):
        installation_import(content=content)

    after = _every_table()
    assert {label: len(rows) for label, rows in after.items()} == counts
    for label in before:
        lost, new = set(before[label]) - set(after[label]), set(after[label]) - set(before[label])
        assert not lost and not new, (label, sorted(lost)[:2], sorted(new)[:2])
    sources = set(Rating.objects.values_list("source", flat=True))
    assert sources == {"form", "api", "import"}
    assert Assignment.objects.filter(status="pending", assigned_by__username="ada").exists()
    assert RatingHistory.objects.filter(changed_by__username="mona").exists()
    # Snapshots are derived: the restore queues them for the worker.
    assert AlignmentSnapshot.objects.filter(status="queued").exists()
    # The item text parts' choice is not carried: the worker measures every domain again.
    assert [m.args for m in broker.sent("judges.item_parts_measure")] == [[]]
    assert client.login(username="ada", password=PASSWORD)
    assert User.objects.get(username="ada").is_admin
    assert User.objects.get(username="mona").role == User.Role.MANAGER


def test_the_archive_csvs_hold_no_live_formula_and_come_back_exact(busy_installation):
    archive = zipfile.ZipFile(io.BytesIO(installation_export()))
    cells = [
        cell
        for name in archive.namelist()
        if name.endswith(".csv")
        for row in csv.reader(io.StringIO(archive.read(name).decode()))
        for cell in row
    ]
    assert any(c.startswith("'=HYPERLINK") for c in cells)
    assert not [c for c in cells if c.startswith(FORMULA_PREFIXES)]


def test_an_unfinished_run_comes_back_cancelled_with_a_note(busy_installation):
    nlp = Domain.objects.get(key="fiction")
    queued, _ = judges.judge_run_request(
        purpose="loo_evaluation",
        domain=nlp,
        dimensions=["style"],
        configs=list(JudgeConfig.objects.all()[:1]),
        reviewer=User.objects.get(username="otto"),
        enqueue=False,
    )
    content = installation_export()
    _empty_every_table()
    installation_import(content=content)
    run = JudgeRun.objects.get(id=queued.id)
    assert run.status == "cancelled" and "start it again" in run.error
    assert JudgeRun.objects.order_by("-id").first().id == queued.id


def test_a_second_admin_restoring_keeps_their_own_account(busy_installation):
    content = installation_export()
    _empty_every_table()
    restorer = UserFactory(username="ada", role=User.Role.ADMIN, first_name="New Ada")
    results = installation_import(content=content, actor=restorer)
    accounts = next(r for r in results if r.kind == "accounts")
    assert accounts.notes == ["1 accounts already here were kept as they are."]
    assert User.objects.get(username="ada").first_name == "New Ada"
    assert User.objects.get(username="mona").role == User.Role.MANAGER


def test_a_version_1_archive_still_restores_what_it_carries(busy_installation):
    from apps.catalog.services.archive.common import plain_csv
    from apps.catalog.services.archive.state import STATE_FILES
    from apps.catalog.services.archive.state_panels import PANEL_FILES

    ratings = sorted(Rating.objects.values_list("idea__external_id", "dimension__key", "status"))
    v2 = zipfile.ZipFile(io.BytesIO(installation_export()))
    manifest = json.loads(v2.read("manifest.json"))
    manifest.update(version=1, restored=["rating_history.csv"])
    del manifest["neutralised"]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as v1:
        v1.writestr("manifest.json", json.dumps(manifest))
        for name in v2.namelist():
            if name == "manifest.json" or name in STATE_FILES or name in PANEL_FILES:
                continue
            data = v2.read(name)
            if name.endswith(".csv"):
                data, _ = plain_csv(data, drop=["source"] if name == "ratings.csv" else [])
            v1.writestr(name, data)
    _empty_every_table()
    UserFactory(username="ada", role=User.Role.ADMIN)

    installation_import(content=out.getvalue())

    after = sorted(Rating.objects.values_list("idea__external_id", "dimension__key", "status"))
    assert after == ratings
    assert set(Rating.objects.values_list("source", flat=True)) == {"import"}


def test_judge_rows_of_a_domain_on_the_default_rubric_come_back(busy_installation):
    # A domain without its own rubric is rated on the default one (as the demo's domains are).
    from apps.screening.models import Rubric

    pbig = Rubric.objects.get(key="pbig")
    Domain.objects.filter(rubric=None).update(rubric=pbig)
    Rubric.objects.update(is_default=False)
    Rubric.objects.filter(key="stories").update(is_default=True)
    Domain.objects.filter(key="fiction").update(rubric=None)
    before = JudgePrediction.objects.count()
    content = installation_export()
    _empty_every_table()
    installation_import(content=content)
    assert JudgePrediction.objects.count() == before > 0


def test_a_version_2_archive_restores_without_panels_or_routing(busy_installation):
    from apps.catalog.services.archive.state_panels import PANEL_FILES

    v3 = zipfile.ZipFile(io.BytesIO(installation_export()))
    manifest = json.loads(v3.read("manifest.json"))
    manifest.update(version=2, restored=[n for n in manifest["restored"] if n not in PANEL_FILES])
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as v2:
        v2.writestr("manifest.json", json.dumps(manifest))
        for name in v3.namelist():
            if name != "manifest.json" and name not in PANEL_FILES:
                v2.writestr(name, v3.read(name))
    judged = JudgePrediction.objects.count()
    _empty_every_table()

    installation_import(content=out.getvalue())

    assert JudgePrediction.objects.count() == judged > 0
    assert not Persona.objects.exists() and not DomainRouting.objects.exists()


def test_an_unfinished_panel_run_comes_back_failed_with_a_note(busy_installation):
    done = PanelRun.objects.get()
    running = PanelRun.objects.create(
        domain=done.domain,
        persona_source="documents",
        dimension_keys=["style"],
        budget_tokens=100,
        model="gemma",
        status="running",
    )
    running.personas.set(done.personas.all())
    content = installation_export()
    _empty_every_table()
    results = installation_import(content=content)
    run = PanelRun.objects.get(id=running.id)
    assert run.status == "failed" and "start it again" in run.error
    assert run.finished_at == run.updated_at
    assert not PanelChunk.objects.exists()
    runs = next(r for r in results if r.kind == "panel runs")
    assert runs.notes and "1 unfinished panel runs came back failed" in runs.notes[0]
    # New rows continue after the restored ids.
    assert (
        PanelRun.objects.create(
            domain=Domain.objects.get(key="fiction"),
            persona_source="documents",
            budget_tokens=1,
            model="m",
        ).id
        > running.id
    )


def test_an_installation_with_panels_is_not_empty(busy_installation):
    """Panel rows keep their ids in a restore: an installation holding any is refused, named."""
    content = installation_export()
    _empty_every_table()
    fiction = Domain.objects.create(key="fiction", name="Fiction")
    DomainRouting.objects.create(domain=fiction, automatic=False)
    with pytest.raises(ApplicationError) as info:
        installation_import(content=content)
    assert info.value.errors[0].field == "installation"
    assert "panels" in info.value.errors[0].message
