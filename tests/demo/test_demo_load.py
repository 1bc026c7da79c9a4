"""Loading the demo through the import services, on PostgreSQL, and the `demo` command."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from apps.accounts.models import ReviewerProfile, User
from apps.catalog.models import Domain, Idea, Patent
from apps.demo.generator import generate_demo
from apps.demo.services import DEMO_PASSWORD, demo_load, demo_sizes
from apps.screening.models import Assignment, Rating, RatingHistory

NOW = datetime(2026, 3, 1, tzinfo=UTC)
SCALE = 0.3


def _snapshot() -> dict[str, object]:
    return {
        "patents": sorted(
            Patent.objects.values_list("external_id", "title", "abstract", "domain__key")
        ),
        "ideas": sorted(
            Idea.objects.values_list("external_id", "patent__external_id", "title", "source")
        ),
        "ratings": sorted(
            Rating.objects.values_list(
                "reviewer__username",
                "idea__external_id",
                "dimension__key",
                "status",
                "score",
                "rationale",
            )
        ),
        "history": RatingHistory.objects.count(),
        "assignments": sorted(
            Assignment.objects.values_list("reviewer__username", "idea__external_id", "status")
        ),
        "users": sorted(
            User.objects.values_list("username", "role", "password", "is_staff", "is_superuser")
        ),
        "profiles": sorted(
            ReviewerProfile.objects.values_list("user__username", "background", "years_experience")
        ),
    }


@pytest.mark.django_db
def test_demo_load_stores_the_generated_data_set_through_the_imports():
    summary = demo_load(seed=0, scale=SCALE, now=NOW)
    data = generate_demo(seed=0, now=NOW, **demo_sizes(scale=SCALE))

    assert summary.loaded
    assert Patent.objects.count() == len(data.patents)
    assert Idea.objects.count() == len(data.ideas)
    assert Rating.objects.count() == len(data.ratings)
    assert set(Domain.objects.values_list("key", "name")) == {
        ("nlp", "Natural Language Processing"),
        ("cs", "Computer Science"),
        ("materials", "Materials Chemistry"),
    }
    gated = sum(1 for r in data.ratings if r["score"] is None)
    assert Rating.objects.filter(status=Rating.Status.NOT_RATED_BY_DESIGN).count() == gated
    assert Rating.objects.filter(status=Rating.Status.SCORED).count() == len(data.ratings) - gated
    # A spot check that scores arrive exactly as generated.
    row = next(r for r in data.ratings if r["score"] is not None and r["rationale"])
    stored = Rating.objects.get(
        reviewer__username=row["reviewer"],
        idea__external_id=row["idea"],
        dimension__key=row["dimension"],
    )
    assert (stored.score, stored.rationale, stored.source) == (
        row["score"],
        row["rationale"],
        Rating.Source.IMPORT,
    )
    assert summary.counts["ratings"] == len(data.ratings)


@pytest.mark.django_db
def test_demo_load_creates_the_logins_with_the_demo_password():
    summary = demo_load(seed=0, scale=SCALE, now=NOW)
    admin = User.objects.get(username="admin")
    manager = User.objects.get(username="manager")
    assert admin.role == User.Role.ADMIN and admin.is_staff and admin.is_superuser
    assert manager.role == User.Role.MANAGER and not manager.is_staff and not manager.is_superuser
    for username in (
        "admin",
        "manager",
        *[r.username for r in User.objects.filter(role=User.Role.REVIEWER)],
    ):
        assert authenticate(username=username, password=DEMO_PASSWORD) is not None, username
    roles = [x.role for x in summary.logins]
    assert roles[:2] == ["admin", "manager"]
    assert "reviewer (technical)" in roles and "reviewer (business)" in roles
    assert all(x.password == DEMO_PASSWORD for x in summary.logins)


@pytest.mark.django_db
def test_each_demo_reviewer_gets_a_queue_of_ideas_they_have_not_rated():
    demo_load(seed=0, scale=SCALE, now=NOW)
    reviewers = User.objects.filter(role=User.Role.REVIEWER).select_related("reviewer_profile")
    assert reviewers.count() == demo_sizes(scale=SCALE)["n_reviewers"]
    for reviewer in reviewers:
        pending = Assignment.objects.filter(
            reviewer=reviewer, status=Assignment.Status.PENDING
        ).select_related("idea__patent")
        assert pending.count() == 4, reviewer.username
        domains = set(reviewer.reviewer_profile.domains.values_list("id", flat=True))
        for assignment in pending:
            assert assignment.idea.patent.domain_id in domains
            assert not Rating.objects.filter(reviewer=reviewer, idea=assignment.idea).exists()
        # Every rated idea has a completed assignment, so the reviewer can reopen and edit it.
        rated = set(Rating.objects.filter(reviewer=reviewer).values_list("idea_id", flat=True))
        done = set(
            Assignment.objects.filter(
                reviewer=reviewer, status=Assignment.Status.COMPLETED
            ).values_list("idea_id", flat=True)
        )
        assert rated == done


@pytest.mark.django_db
def test_loading_the_demo_twice_leaves_the_same_data():
    demo_load(seed=0, scale=SCALE, now=NOW)
    first = _snapshot()
    second_summary = demo_load(seed=0, scale=SCALE, now=NOW)
    assert _snapshot() == first
    assert all(" 0 created, 0 updated" in line for line in second_summary.imports), (
        second_summary.imports
    )


@pytest.mark.django_db
def test_the_full_size_demo_loads_on_postgresql():
    summary = demo_load(seed=0, scale=1.0, now=NOW)
    assert summary.counts["patents"] == 120
    assert summary.counts["ideas"] == 300
    assert summary.counts["reviewers"] == 25
    assert 2700 <= summary.counts["ratings"] <= 3300
    assert summary.counts["pending assignments"] == 100


@pytest.mark.django_db
def test_the_demo_command_loads_and_prints_the_logins_and_the_url():
    out = StringIO()
    call_command("demo", "--scale", str(SCALE), "--url", "http://127.0.0.1:8104/", stdout=out)
    text = out.getvalue()
    assert "Demo data loaded" in text
    assert "http://127.0.0.1:8104/" in text
    for word in ("admin", "manager", "reviewer (technical)", "reviewer (business)", DEMO_PASSWORD):
        assert word in text
    assert Idea.objects.exists()


@pytest.mark.django_db
def test_the_demo_command_with_if_empty_changes_nothing_when_ideas_exist():
    call_command("demo", "--scale", str(SCALE), stdout=StringIO())
    before = _snapshot()
    Rating.objects.filter(status=Rating.Status.SCORED).first().delete()
    changed = _snapshot()
    out = StringIO()
    call_command("demo", "--if-empty", "--scale", str(SCALE), stdout=out)
    text = out.getvalue()
    assert "not loaded again" in text
    assert "pluralist-demo" in text and "admin" in text
    assert _snapshot() == changed != before


@pytest.mark.django_db
def test_the_demo_command_refuses_a_scale_that_is_not_positive():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="scale"):
        call_command("demo", "--scale", "0", stdout=StringIO())
    assert not Idea.objects.exists()
