"""A backup restores an installation: export, empty every table, import, compare every table.

The round trip runs on the real PostgreSQL test database. "Empty" means every table of the
project truncated (accounts included): what comes back is only what the archive carries.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.core.csv_export import FORMULA_PREFIXES
from apps.core.errors import ApplicationError
from apps.dataio.services.archive import installation_export, installation_import
from apps.dataio.services.archive.tables import (
    carried_labels,
    installation_models,
    kind_of,
)
from apps.decisions.models import DomainRouting
from apps.findings.models import FindingSnapshot
from apps.judges import services as judges
from apps.judges.models import AlignmentSnapshot, JudgeConfig, JudgePrediction, JudgeRun
from apps.panels.models import (
    PanelChunk,
    PanelRun,
    Persona,
)
from apps.screening.models import Assignment, Rating, RatingHistory
from tests.dataio.archive_fixtures import empty_every_table, every_table
from tests.factories import PASSWORD, UserFactory
from tests.judges import broker

pytestmark = pytest.mark.django_db


def test_every_table_is_carried_derived_or_left_out_for_a_stated_reason(busy_installation):
    unclassified = [m._meta.label for m in installation_models() if kind_of(m._meta.label) is None]
    assert unclassified == []
    tables = every_table()
    assert set(tables) == set(carried_labels())
    # The busy installation holds rows in every carried table, so the round trip tests them all.
    assert all(tables[t] for t in tables), [t for t in tables if not tables[t]]


def test_a_restore_into_an_empty_database_brings_every_table_back(
    busy_installation, client, django_capture_on_commit_callbacks
):
    before = every_table()
    counts = {label: len(rows) for label, rows in before.items()}
    content = installation_export()
    empty_every_table()
    assert not User.objects.exists() and not JudgeRun.objects.exists()
    broker.purge()

    with django_capture_on_commit_callbacks(execute=True):
        installation_import(content=content)

    after = every_table()
    assert {label: len(rows) for label, rows in after.items()} == counts
    for label in before:
        lost, new = set(before[label]) - set(after[label]), set(after[label]) - set(before[label])
        assert not lost and not new, (label, sorted(lost)[:2], sorted(new)[:2])
    sources = set(Rating.objects.values_list("source", flat=True))
    assert sources == {"form", "api", "import"}
    assert Assignment.objects.filter(status="pending", assigned_by__username="ada").exists()
    assert RatingHistory.objects.filter(changed_by__username="mona").exists()
    # Snapshots are derived: the restore queues them for the worker, the findings at every
    # threshold the installation had computed them at (0.6 came back as 0.5 before version 4).
    assert AlignmentSnapshot.objects.filter(status="queued").exists()
    assert set(FindingSnapshot.objects.values_list("threshold", "status")) >= {(0.6, "queued")}
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
    empty_every_table()
    installation_import(content=content)
    run = JudgeRun.objects.get(id=queued.id)
    assert run.status == "cancelled" and "start it again" in run.error
    assert JudgeRun.objects.order_by("-id").first().id == queued.id


def test_a_second_admin_restoring_keeps_their_own_account(busy_installation):
    content = installation_export()
    empty_every_table()
    restorer = UserFactory(username="ada", role=User.Role.ADMIN, first_name="New Ada")
    results = installation_import(content=content, actor=restorer)
    accounts = next(r for r in results if r.kind == "accounts")
    assert accounts.notes == ["1 accounts already here were kept as they are."]
    assert User.objects.get(username="ada").first_name == "New Ada"
    assert User.objects.get(username="mona").role == User.Role.MANAGER


def test_a_version_1_archive_still_restores_what_it_carries(busy_installation):
    from apps.dataio.services.archive.common import plain_csv
    from apps.dataio.services.archive.state import STATE_FILES
    from apps.dataio.services.archive.state_panels import PANEL_FILES

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
    empty_every_table()
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
    empty_every_table()
    installation_import(content=content)
    assert JudgePrediction.objects.count() == before > 0


def test_a_version_2_archive_restores_without_panels_or_routing(busy_installation):
    from apps.dataio.services.archive.state_panels import PANEL_FILES

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
    empty_every_table()

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
    empty_every_table()
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
    empty_every_table()
    fiction = Domain.objects.create(key="fiction", name="Fiction")
    DomainRouting.objects.create(domain=fiction, automatic=False)
    with pytest.raises(ApplicationError) as info:
        installation_import(content=content)
    assert info.value.errors[0].field == "installation"
    assert "panels" in info.value.errors[0].message
