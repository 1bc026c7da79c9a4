"""The whole installation goes out as one archive and comes back whole into an empty one."""

from __future__ import annotations

import io
import json
import zipfile
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea, Patent
from apps.catalog.services.archive import installation_export, installation_import
from apps.core.errors import ApplicationError, PermissionDenied
from apps.disagreement.analysis import compute_metrics
from apps.screening.models import Assignment, Rating, RatingHistory, Rubric
from apps.screening.selectors.frame import rating_frame, rubric_scales
from apps.screening.services.ratings import rating_decline, rating_submit

pytestmark = pytest.mark.django_db

OPTIONAL_RUBRIC = """
key: stories
name: Story quality
domains: [fiction]
item_noun: story
source_noun: prompt
dimensions:
  - key: style
    scale: {min: 1, max: 4}
    optional: true
  - key: plot
    scale: {min: 1, max: 4}
    optional: true
"""


@pytest.fixture
def installation(examples_loaded, run_import, admin):
    """The documented examples (PBIG, gates) plus form submissions with yes/no answers and a
    rationale, a decline, a changed rating (history), and a rubric with optional dimensions."""
    run_import("rubric", OPTIONAL_RUBRIC, "stories.yaml", create_domains=True)
    run_import("patents", "external_id,domain,title\nprompt-1,fiction,A door\n", "p.csv")
    run_import(
        "ideas",
        "external_id,patent,description\n"
        + "".join(f"story-{i},prompt-1,Story {i} about a door.\n" for i in range(6)),
        "i.csv",
    )
    run_import(
        "reviewers",
        "username,background,domains\nwren,literature,fiction\nyuki,crowd,fiction\n",
        "r.csv",
    )
    rows = "".join(
        f"story-{i},{who},style,{1 + (i + k) % 4}\nstory-{i},{who},plot,{'' if i == 2 else 2}\n"
        for i in range(6)
        for k, who in enumerate(["wren", "yuki"])
    )
    run_import("ratings", "idea,reviewer,dimension,score\n" + rows, "ratings.csv")

    alice = User.objects.get(username="alice")
    idea = Idea.objects.get(external_id="idea-004")
    Assignment.objects.get_or_create(reviewer=alice, idea=idea)
    scores = {"specificity": 4, "technical_validity": 3, "innovativeness": 2}
    scores |= {"need_validity": 2, "market_size": 1}
    answers = {"competitive_advantage": {"hard_to_imitate": True, "technology_essential": True}}
    rating_submit(
        reviewer=alice,
        idea=idea,
        scores=scores,
        answers=answers,
        rationales={"specificity": "Clear, =SUM(A1) included on purpose."},
    )
    rating_submit(
        reviewer=alice, idea=idea, scores={**scores, "innovativeness": 3}, answers=answers
    )
    other = Idea.objects.get(external_id="idea-005")
    Assignment.objects.get_or_create(reviewer=alice, idea=other)
    rating_decline(reviewer=alice, idea=other, reason="Conflict of interest")


def _states() -> dict[tuple[str, str, str], tuple]:
    return {
        (r.idea.external_id, r.reviewer.username, r.dimension.key): (
            r.status,
            r.score,
            r.answers,
            r.rationale,
            r.created_at,
            r.updated_at,
            r.source,
        )
        for r in Rating.objects.select_related("idea", "reviewer", "dimension")
    }


def _history() -> list[tuple]:
    return sorted(
        (
            h.rating.idea.external_id,
            h.rating.reviewer.username,
            h.rating.dimension.key,
            h.changed_at,
            h.changed_by.username if h.changed_by else None,
            h.source,
            h.old_status,
            h.old_score,
            h.old_answers,
            h.old_rationale,
            h.new_status,
            h.new_score,
            h.new_answers,
            h.new_rationale,
        )
        for h in RatingHistory.objects.select_related(
            "rating__idea", "rating__reviewer", "rating__dimension", "changed_by"
        )
    )


def _metrics() -> dict:
    result = compute_metrics(rating_frame(), scales=rubric_scales(), n_boot=50, min_co_rated=2)
    return {"cells": result["cells"], "pairwise": result["pairwise"]}


def _empty_the_installation() -> None:
    Rating.objects.all().delete()
    Assignment.objects.all().delete()
    Idea.objects.all().delete()
    Patent.objects.all().delete()
    User.objects.filter(role=User.Role.REVIEWER).delete()
    Domain.objects.all().delete()
    Rubric.objects.exclude(key="pbig").delete()


def test_the_round_trip_gives_identical_metrics_rating_states_and_history(installation, admin):
    states, history, metrics = _states(), _history(), _metrics()
    statuses = {s[0] for s in states.values()}
    assert statuses == {"scored", "gated", "unanswered", "declined"}
    assert metrics["cells"] and metrics["pairwise"]

    content = installation_export(actor=admin)
    _empty_the_installation()
    results = installation_import(content=content, actor=admin)

    assert "rating history" in [r.kind for r in results]
    assert _states() == states
    assert _history() == history
    assert _metrics() == metrics
    assert Domain.objects.get(key="fiction").rubric.key == "stories"
    assert Rubric.objects.get(is_default=True).key == "pbig"
    declined = Assignment.objects.get(reviewer__username="alice", idea__external_id="idea-005")
    assert declined.status == Assignment.Status.DECLINED


def test_the_archive_holds_every_part_in_the_import_formats(installation, admin):
    archive = zipfile.ZipFile(io.BytesIO(installation_export(actor=admin)))
    names = set(archive.namelist())
    assert {
        "manifest.json",
        "rubrics/pbig.yaml",
        "rubrics/stories.yaml",
        "patents.csv",
        "ideas.csv",
        "reviewers.csv",
        "ratings.csv",
        "rating_history.csv",
        "judge_configs.jsonl",
        "judge_predictions.csv",
    } <= names
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["counts"]["ratings"] == Rating.objects.count()
    header = archive.read("ratings.csv").decode().splitlines()[0]
    assert header == (
        "idea,reviewer,dimension,score,status,answers,rationale,created_at,updated_at,source"
    )


def test_importing_into_a_non_empty_installation_changes_nothing(installation, admin):
    content = installation_export(actor=admin)
    before = _states()
    with pytest.raises(ApplicationError) as refused:
        installation_import(content=content, actor=admin)
    assert refused.value.errors[0].field == "installation"
    assert _states() == before


def test_a_broken_file_in_the_archive_is_named_and_nothing_is_kept(installation, admin):
    original = zipfile.ZipFile(io.BytesIO(installation_export(actor=admin)))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as broken:
        for name in original.namelist():
            data = original.read(name)
            if name == "ratings.csv":
                lines = data.decode().splitlines()
                lines[1] = lines[1].replace(",scored,", ",gated,", 1)
                data = ("\n".join(lines) + "\n").encode()
            broken.writestr(name, data)
    _empty_the_installation()
    with pytest.raises(ApplicationError) as refused:
        installation_import(content=out.getvalue(), actor=admin)
    assert refused.value.message.startswith("ratings.csv:")
    assert any(e.field.startswith("ratings.csv: ") and e.row == 2 for e in refused.value.errors)
    assert not Patent.objects.exists() and not Rating.objects.exists()


def test_a_file_that_is_not_an_archive_is_refused(db, admin):
    with pytest.raises(ApplicationError) as refused:
        installation_import(content=b"idea,reviewer\n", actor=admin)
    assert refused.value.errors[0].message == "is not a zip archive"


def test_only_admins_export(installation, manager):
    with pytest.raises(PermissionDenied):
        installation_export(actor=manager)


def test_the_commands_export_and_import_the_archive(installation, tmp_path):
    path = tmp_path / "backup.zip"
    call_command("export_installation", str(path), stdout=StringIO())
    states = _states()
    _empty_the_installation()
    out = StringIO()
    call_command("import_installation", str(path), stdout=out)
    assert "Imported ratings" in out.getvalue()
    assert _states() == states


def test_the_archive_page_downloads_and_imports_for_admins_only(
    installation, admin, manager, client
):
    client.force_login(manager)
    assert client.get(reverse("catalog:archive_home")).status_code == 403
    assert client.post(reverse("catalog:archive_export")).status_code == 403
    client.force_login(admin)
    page = client.get(reverse("catalog:archive_home"))
    assert page.status_code == 200 and b"already holds data" in page.content
    download = client.post(reverse("catalog:archive_export"))
    assert download["Content-Type"] == "application/zip"
    states = _states()
    _empty_the_installation()
    upload = io.BytesIO(b"".join(download.streaming_content))
    upload.name = "backup.zip"
    done = client.post(reverse("catalog:archive_import"), {"file": upload})
    assert done.status_code == 200 and b"Archive imported." in done.content
    assert _states() == states
    bad = io.BytesIO(b"not a zip")
    bad.name = "x.zip"
    refused = client.post(reverse("catalog:archive_import"), {"file": bad})
    assert refused.status_code == 400 and b"is not a zip archive" in refused.content
