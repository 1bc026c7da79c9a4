"""Every HTML page of the project against every role, with the exact status code expected.

The pages are read from the URL patterns themselves (apps/*/urls.py and the assignments URLconf),
and a test fails if one of them is missing from the table below, so a new page cannot ship
without a decision about who may open it.

Personas (tests/conftest.py): anonymous; rita (reviewer, NLP, assigned the idea); otto (another
NLP reviewer on the same idea); oscar (outsider: reviewer of Materials only); mona (manager: reads,
never writes); ada (admin: manages).

Rules, from the developers' guide and the views:
- anonymous visitors are sent to the login form (302 to /accounts/login/);
- reviewers open only their own screening pages (their queue, the ideas assigned to them: others
  are 404 so they do not even learn which ideas exist) and their own judge (/judges/me/);
- managers read the disagreement and judges dashboards and /screening/ratings/ and change nothing:
  every POST that changes data refuses them with 403. The one POST they may send is the metrics
  recompute, which refreshes the dashboard's derived numbers and edits no rating (the metrics
  API allows it too);
- admins manage everything (imports, assignments, judge studies and cancellations) but do not
  rate ideas, so the reviewer pages refuse them;
- reviewers and managers get 403 on every admin page.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, reverse

from apps.catalog.models import ImportJob
from apps.decisions.models import DecisionSnapshot
from apps.decisions.services import decisions_recompute
from apps.disagreement.models import MetricSnapshot, scope_key
from apps.disagreement.services import metrics_recompute
from apps.findings.models import FindingSnapshot
from apps.findings.models import scope_key as findings_scope
from apps.findings.services import findings_recompute
from apps.judges.models import JudgeRun
from apps.panels.models import PanelRun
from apps.screening.models import Assignment, Rating
from apps.screening.services.ratings import rating_submit
from tests.factories import AssignmentFactory, IdeaFactory

ROLES = ("anonymous", "reviewer", "other_reviewer", "outsider", "manager", "admin")
APPS = Path(__file__).resolve().parent.parent / "apps"

# Shorthands for the most common rows: codes for anon, rita, otto, oscar, mona, ada.
MANAGERS_READ = (302, 403, 403, 403, 200, 200)
ADMIN_ONLY = (302, 403, 403, 403, 403, 200)
ADMIN_POST = (302, 403, 403, 403, 403, 302)  # admin's change succeeds and redirects
REVIEWERS_ONLY = (302, 200, 200, 200, 403, 403)
EVERYONE = (200, 200, 200, 200, 200, 200)
NOT_GET = (405, 405, 405, 405, 405, 405)  # require_POST checks the method before the login

# url name, path kwargs (names of world ids), method, body, expected codes
MATRIX: list[tuple[str, dict[str, str], str, dict[str, Any] | None, tuple[int, ...]]] = [
    # core and accounts
    ("home", {}, "get", None, (302, 302, 302, 302, 302, 302)),
    ("healthz", {}, "get", None, EVERYONE),
    ("login", {}, "get", None, EVERYONE),
    ("logout", {}, "get", None, NOT_GET),
    ("logout", {}, "post", {}, (302, 302, 302, 302, 302, 302)),
    # password reset (Django's views): open to everyone, signed in or not
    ("password_reset", {}, "get", None, EVERYONE),
    ("password_reset", {}, "post", {"email": "nobody@example.com"}, (302,) * 6),
    ("password_reset_done", {}, "get", None, EVERYONE),
    ("password_reset_confirm", {"uidb64": "=MQ", "token": "=not-a-token"}, "get", None, EVERYONE),
    ("password_reset_complete", {}, "get", None, EVERYONE),
    # invitations: admins only
    ("invitations", {}, "get", None, ADMIN_ONLY),
    ("invitation_create", {"user_id": "rita"}, "get", None, (302, 403, 403, 403, 403, 405)),
    ("invitation_create", {"user_id": "rita"}, "post", {"how": "link"}, ADMIN_ONLY),
    # catalog: the admin's import page
    ("catalog:admin_home", {}, "get", None, ADMIN_ONLY),
    ("catalog:import_upload", {"kind": "=ideas"}, "get", None, (302, 403, 403, 403, 403, 405)),
    # No file: the admin gets the page back with the form's error; nothing is imported.
    ("catalog:import_upload", {"kind": "=ideas"}, "post", {}, ADMIN_ONLY),
    # a large upload's import job: its page, its polled partial, its problems as CSV
    ("catalog:import_job", {"job_id": "import_job"}, "get", None, ADMIN_ONLY),
    ("catalog:import_job", {"job_id": "import_job"}, "post", {}, (302, 403, 403, 403, 403, 405)),
    ("catalog:import_job_status", {"job_id": "import_job"}, "get", None, ADMIN_ONLY),
    (
        "catalog:import_job_status",
        {"job_id": "=999999"},
        "get",
        None,
        (302, 403, 403, 403, 403, 404),
    ),
    ("catalog:import_job_errors", {"job_id": "import_job"}, "get", None, ADMIN_ONLY),
    # import formats and their example files: documentation, for every signed-in role
    ("catalog:format_help", {"kind": "=ratings"}, "get", None, (302, 200, 200, 200, 200, 200)),
    ("catalog:example_file", {"name": "=ideas.csv"}, "get", None, (302, 200, 200, 200, 200, 200)),
    # catalog: the whole-installation archive (the world is not empty, so an import is refused)
    ("catalog:archive_home", {}, "get", None, ADMIN_ONLY),
    ("catalog:archive_export", {}, "get", None, (302, 403, 403, 403, 403, 405)),
    ("catalog:archive_export", {}, "post", {}, ADMIN_ONLY),
    ("catalog:archive_import", {}, "get", None, (302, 403, 403, 403, 403, 405)),
    ("catalog:archive_import", {}, "post", {}, (302, 403, 403, 403, 403, 400)),
    # screening: the reviewer's queue and rating pages
    ("screening:queue", {}, "get", None, REVIEWERS_ONLY),
    ("screening:rate", {"idea_id": "idea"}, "get", None, (302, 200, 200, 404, 403, 403)),
    ("screening:rate", {"idea_id": "rita_idea"}, "get", None, (302, 200, 404, 404, 403, 403)),
    # rita's saved stages 2 and 3 would close: she is asked to confirm first (200, unsaved).
    (
        "screening:rate",
        {"idea_id": "idea"},
        "post",
        {"score-specificity": "1", "action": "submit"},
        (302, 200, 302, 404, 403, 403),
    ),
    (
        "screening:rate",
        {"idea_id": "rita_idea"},
        "post",
        {"score-specificity": "1", "action": "submit"},
        (302, 302, 404, 404, 403, 403),
    ),
    ("screening:decline", {"idea_id": "idea"}, "get", None, (302, 405, 405, 405, 403, 403)),
    (
        "screening:decline",
        {"idea_id": "rita_idea"},
        "post",
        {"reason": "not my field", "confirm": "on"},
        (302, 302, 404, 404, 403, 403),
    ),
    ("screening:decline_undo", {"idea_id": "idea"}, "get", None, (302, 405, 405, 405, 403, 403)),
    # rita's idea is not declined: she is told so and sent back; nothing changes.
    (
        "screening:decline_undo",
        {"idea_id": "rita_idea"},
        "post",
        {},
        (302, 302, 404, 404, 403, 403),
    ),
    ("screening:ratings", {}, "get", None, MANAGERS_READ),
    ("screening:ratings_csv", {}, "get", None, MANAGERS_READ),
    # assignments: admins only
    ("assignments:index", {}, "get", None, ADMIN_ONLY),
    ("assignments:assign", {}, "get", None, NOT_GET),
    (
        "assignments:assign",
        {},
        "post",
        {"reviewer": "{rita}", "ideas": "{unassigned_ext}"},
        ADMIN_POST,
    ),
    ("assignments:bulk", {}, "get", None, NOT_GET),
    ("assignments:bulk", {}, "post", {"domain": "{domain}", "per_idea": 1}, ADMIN_POST),
    ("assignments:delete", {"pk": "pending_assignment"}, "get", None, NOT_GET),
    ("assignments:delete", {"pk": "pending_assignment"}, "post", {}, ADMIN_POST),
    # disagreement: managers and admins read
    ("disagreement:overview", {}, "get", None, MANAGERS_READ),
    ("disagreement:strictness", {}, "get", None, MANAGERS_READ),
    ("disagreement:agreement", {}, "get", None, MANAGERS_READ),
    ("disagreement:panel", {}, "get", None, MANAGERS_READ),
    ("disagreement:contested", {}, "get", None, MANAGERS_READ),
    ("disagreement:split", {}, "get", None, MANAGERS_READ),
    # Decide moved to the decisions app: its old addresses redirect there, for the same roles.
    ("disagreement:decide", {}, "get", None, (302, 403, 403, 403, 302, 302)),
    ("disagreement:export_decide", {}, "get", None, (302, 403, 403, 403, 302, 302)),
    ("disagreement:idea", {"idea_id": "idea"}, "get", None, MANAGERS_READ),
    *[
        ("disagreement:export", {"kind": f"={kind}"}, "get", None, MANAGERS_READ)
        for kind in ("grid", "strictness", "pairwise", "panel", "contested", "split")
    ],
    ("disagreement:recompute", {}, "get", None, (302, 403, 403, 403, 405, 405)),
    ("disagreement:recompute", {}, "post", {}, (302, 403, 403, 403, 302, 302)),
    ("disagreement:snapshot_progress", {"snapshot_id": "snapshot"}, "get", None, MANAGERS_READ),
    # decisions: managers and admins read Decide and the suggested reads; admins accept them
    ("decisions:decide", {}, "get", None, MANAGERS_READ),
    ("decisions:export", {}, "get", None, MANAGERS_READ),
    ("decisions:recompute", {}, "get", None, (302, 403, 403, 403, 405, 405)),
    ("decisions:recompute", {}, "post", {}, (302, 403, 403, 403, 302, 302)),
    (
        "decisions:snapshot_progress",
        {"snapshot_id": "decision_snapshot"},
        "get",
        None,
        MANAGERS_READ,
    ),
    ("decisions:routing", {}, "get", None, MANAGERS_READ),
    ("decisions:routing_accept", {}, "get", None, (302, 403, 403, 403, 403, 405)),
    # No suggestion chosen: the admin is sent back with the error; nothing is assigned.
    ("decisions:routing_accept", {}, "post", {}, ADMIN_POST),
    ("decisions:routing_domain", {}, "get", None, (302, 403, 403, 403, 403, 405)),
    (
        "decisions:routing_domain",
        {},
        "post",
        {"domain": "{domain_key}", "automatic": "off"},
        ADMIN_POST,
    ),
    # The decision record: managers and admins read and record decisions (issue 26 grants
    # managers this write); reviewers 403. A mark is recorded, then sent back to the page.
    ("decisions:marks", {}, "get", None, MANAGERS_READ),
    ("decisions:marks_csv", {}, "get", None, MANAGERS_READ),
    ("decisions:memo", {}, "get", None, MANAGERS_READ),
    ("decisions:mark_history", {"idea_id": "idea"}, "get", None, MANAGERS_READ),
    ("decisions:mark_set", {"idea_id": "idea"}, "get", None, (302, 403, 403, 403, 405, 405)),
    (
        "decisions:mark_set",
        {"idea_id": "idea"},
        "post",
        {"mark": "hold", "note": "later"},
        (302, 403, 403, 403, 302, 302),
    ),
    ("decisions:shortlist_size", {}, "get", None, (302, 403, 403, 403, 405, 405)),
    (
        "decisions:shortlist_size",
        {},
        "post",
        {"domain": "{domain_key}", "n": "10"},
        (302, 403, 403, 403, 302, 302),
    ),
    # judges: managers and admins read; admins start studies and cancel runs
    ("judges:alignment", {}, "get", None, MANAGERS_READ),
    *[
        ("judges:alignment_csv", {"table": f"={table}"}, "get", None, MANAGERS_READ)
        for table in ("curve", "coarse", "discard", "reasoning", "verdicts", "coverage")
    ],
    ("judges:alignment_status", {}, "get", None, MANAGERS_READ),
    ("judges:alignment_recompute", {}, "get", None, NOT_GET),
    # Queues a snapshot computation (reads only, like the disagreement recompute).
    ("judges:alignment_recompute", {}, "post", {}, (302, 403, 403, 403, 302, 302)),
    ("judges:runs", {}, "get", None, MANAGERS_READ),
    # An empty study form: the admin gets it back with errors; the manager may not send it.
    ("judges:runs", {}, "post", {}, ADMIN_ONLY),
    ("judges:runs_table", {}, "get", None, MANAGERS_READ),
    ("judges:run_detail", {"run_id": "run"}, "get", None, MANAGERS_READ),
    ("judges:run_status", {"run_id": "run"}, "get", None, MANAGERS_READ),
    ("judges:run_cancel", {"run_id": "run"}, "get", None, NOT_GET),
    ("judges:run_cancel", {"run_id": "run"}, "post", {}, ADMIN_POST),
    ("judges:case", {"idea_id": "idea"}, "get", None, MANAGERS_READ),
    ("judges:predictions", {}, "get", None, MANAGERS_READ),
    ("judges:me", {}, "get", None, REVIEWERS_ONLY),
    # findings: managers and admins read; the recompute only queues derived numbers
    ("findings:overview", {}, "get", None, MANAGERS_READ),
    *[
        ("findings:export", {"kind": f"={kind}"}, "get", None, MANAGERS_READ)
        for kind in ("scopes", "findings", "idea-findings")
    ],
    ("findings:recompute", {}, "get", None, (302, 403, 403, 403, 405, 405)),
    ("findings:recompute", {}, "post", {}, (302, 403, 403, 403, 302, 302)),
    # panels: managers and admins read; admins upload documents, draft personas, start runs.
    # An empty form sends the admin back to the panels page with the error (302).
    ("panels:home", {}, "get", None, MANAGERS_READ),
    ("panels:document_upload", {}, "get", None, (302, 403, 403, 403, 403, 405)),
    ("panels:document_upload", {}, "post", {}, ADMIN_POST),
    ("panels:personas_build", {}, "get", None, (302, 403, 403, 403, 403, 405)),
    ("panels:personas_build", {}, "post", {}, ADMIN_POST),
    ("panels:run_start", {}, "get", None, (302, 403, 403, 403, 403, 405)),
    ("panels:run_start", {}, "post", {}, ADMIN_POST),
    ("panels:run_detail", {"run_id": "panel_run"}, "get", None, MANAGERS_READ),
    ("panels:run_status", {"run_id": "panel_run"}, "get", None, MANAGERS_READ),
]


def _url_modules() -> list[str]:
    modules = [f"apps.{path.parent.name}.urls" for path in sorted(APPS.glob("*/urls.py"))]
    return [*modules, "apps.screening.assignment_urls"]


def _names(patterns: list[Any], prefix: str) -> set[str]:
    names: set[str] = set()
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{prefix}{pattern.namespace}:" if pattern.namespace else prefix
            names |= _names(pattern.url_patterns, inner)
        elif isinstance(pattern, URLPattern):
            assert pattern.name, f"{prefix}{pattern.pattern} has no name"
            names.add(prefix + pattern.name)
    return names


def html_page_names() -> set[str]:
    """Every named page of the project's HTML URLconfs, as namespace:name."""
    names: set[str] = set()
    for dotted in _url_modules():
        module = importlib.import_module(dotted)
        namespace = getattr(module, "app_name", None)
        names |= _names(module.urlpatterns, f"{namespace}:" if namespace else "")
    # Pages the project's root URLconf routes itself (the role start page); the API schema and
    # its docs there are not HTML pages of the product.
    root = importlib.import_module("config.urls").urlpatterns
    pages = [p for p in root if isinstance(p, URLPattern) and not str(p.pattern).startswith("api/")]
    return names | _names(pages, "")


def test_the_table_covers_every_html_page_of_the_project():
    assert "apps.judges.urls" in _url_modules() and "apps.core.urls" in _url_modules()
    covered = {name for name, *_ in MATRIX}
    assert html_page_names() - covered == set(), "pages without a permissions row"
    assert covered - html_page_names() == set(), "rows for pages that no longer exist"


def test_every_page_and_method_has_a_row_for_every_role():
    # Each (page, kwargs, method) appears once, with one code per role.
    keys = [(name, tuple(sorted(kwargs.items())), method) for name, kwargs, method, *_ in MATRIX]
    assert len(keys) == len(set(keys))
    assert all(len(codes) == len(ROLES) for *_, codes in MATRIX)


@pytest.fixture
def world(reviewer, other_reviewer, outsider, manager, admin, idea) -> dict[str, Any]:
    """Ratings, a second idea only rita has, a pending assignment, a judge run and a snapshot."""
    rating_submit(
        reviewer=reviewer, idea=idea, scores={"specificity": 3, **_rest(3)}, answers=_ANSWERS
    )
    rating_submit(reviewer=other_reviewer, idea=idea, scores={"specificity": 1})
    rita_idea = AssignmentFactory(reviewer=reviewer, idea=IdeaFactory(patent=idea.patent)).idea
    unassigned = IdeaFactory(patent=idea.patent)
    pending = Assignment.objects.create(
        reviewer=other_reviewer, idea=IdeaFactory(patent=idea.patent)
    )
    run = JudgeRun.objects.create(
        purpose=JudgeRun.Purpose.LOO_EVALUATION,
        domain=idea.patent.domain,
        reviewer=reviewer,
        dimensions=["specificity"],
        scope_key="pages-permissions",
        status=JudgeRun.Status.QUEUED,
    )
    panel_run = PanelRun.objects.create(
        domain=idea.patent.domain, persona_source="invented", budget_tokens=1000, model="m"
    )
    snapshot = MetricSnapshot.objects.create(scope=scope_key(level="ordinal"), level="ordinal")
    snapshot = metrics_recompute(snapshot_id=snapshot.id)
    assert snapshot.status == MetricSnapshot.Status.DONE, snapshot.error
    findings = FindingSnapshot.objects.create(scope=findings_scope(threshold=0.5), threshold=0.5)
    assert findings_recompute(snapshot_id=findings.id).status == FindingSnapshot.Status.DONE
    decided = decisions_recompute(snapshot_id=DecisionSnapshot.objects.create().id)
    assert decided.status == DecisionSnapshot.Status.DONE, decided.error
    return {
        "domain": idea.patent.domain.pk,
        "idea": idea.pk,
        "rita_idea": rita_idea.pk,
        "unassigned_ext": unassigned.external_id,
        "rita": reviewer.pk,
        "pending_assignment": pending.pk,
        "run": run.pk,
        "snapshot": snapshot.pk,
        "decision_snapshot": decided.pk,
        "domain_key": idea.patent.domain.key,
        "panel_run": panel_run.pk,
        "import_job": ImportJob.objects.create(
            kind="ratings", filename="ratings.csv", size=10, status="failed", errors=[]
        ).pk,
    }


_ANSWERS = {"competitive_advantage": {"hard_to_imitate": True, "technology_essential": True}}


def _rest(score: int) -> dict[str, int]:
    return {
        "technical_validity": score,
        "innovativeness": score,
        "need_validity": score,
        "market_size": score,
    }


def _fill(value: Any, ids: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("{") and value.endswith("}"):
        return ids[value[1:-1]]
    return value


def _kwargs(kwargs: dict[str, str], ids: dict[str, Any]) -> dict[str, Any]:
    # "=value" is a literal path argument; anything else names one of the world's ids.
    return {k: v[1:] if v.startswith("=") else ids[v] for k, v in kwargs.items()}


CASES = [
    pytest.param(
        name,
        kwargs,
        method,
        body,
        role,
        expected[i],
        id=f"{method.upper()} {name}{''.join(f' {v}' for v in kwargs.values())} as {role}",
    )
    for name, kwargs, method, body, expected in MATRIX
    for i, role in enumerate(ROLES)
]


@pytest.mark.parametrize("name,kwargs,method,body,role,expected", CASES)
def test_each_role_gets_exactly_the_expected_status_on_each_page(
    request, world, name, kwargs, method, body, role, expected
):
    client = Client()
    if role != "anonymous":
        client.force_login(request.getfixturevalue(role))
    url = reverse(name, kwargs=_kwargs(kwargs, world))
    if method == "post":
        data = {k: _fill(v, world) for k, v in (body or {}).items()}
        response = client.post(url, data)
    else:
        response = client.get(url)
    assert response.status_code == expected, (url, response.content[:300])
    if role == "anonymous" and expected == 302 and name not in ("logout", "password_reset"):
        assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize(
    "role,target",
    [
        ("reviewer", "/screening/"),
        ("outsider", "/screening/"),
        ("manager", "/disagreement/"),
        ("admin", "/catalog/admin/"),
    ],
)
def test_home_sends_each_role_to_the_page_it_works_from(db, request, role, target):
    client = Client()
    client.force_login(request.getfixturevalue(role))
    assert client.get("/")["Location"] == target


def test_a_manager_post_changes_nothing(world, manager):
    """The 403s above are not cosmetic: the refused requests leave the data as it was."""
    client = Client()
    client.force_login(manager)
    before = (
        Assignment.objects.count(),
        Rating.objects.count(),
        JudgeRun.objects.filter(status=JudgeRun.Status.QUEUED).count(),
    )
    client.post(
        reverse("assignments:assign"), {"reviewer": world["rita"], "ideas": world["unassigned_ext"]}
    )
    client.post(reverse("assignments:delete", kwargs={"pk": world["pending_assignment"]}))
    client.post(reverse("judges:run_cancel", kwargs={"run_id": world["run"]}))
    client.post(
        reverse("screening:rate", kwargs={"idea_id": world["idea"]}),
        {"score-specificity": "4", "action": "submit"},
    )
    after = (
        Assignment.objects.count(),
        Rating.objects.count(),
        JudgeRun.objects.filter(status=JudgeRun.Status.QUEUED).count(),
    )
    assert after == before
    assert (
        Rating.objects.get(
            reviewer__username="rita", idea_id=world["idea"], dimension__key="specificity"
        ).score
        == 3
    )


def test_only_managers_and_admins_read_another_reviewers_rationale(
    world, reviewer, other_reviewer, manager, admin, idea
):
    """Blind review: otto's own rating page never shows what rita wrote; the ratings page does."""
    secret = "Rita-only-rationale-7f3"
    rating_submit(
        reviewer=reviewer,
        idea=idea,
        scores={"specificity": 3, **_rest(3)},
        answers=_ANSWERS,
        rationales={"specificity": secret},
    )
    pages = {
        other_reviewer: reverse("screening:rate", kwargs={"idea_id": world["idea"]}),
        manager: reverse("screening:ratings"),
        admin: reverse("screening:ratings"),
    }
    seen = {}
    for user, url in pages.items():
        client = Client()
        client.force_login(user)
        response = client.get(url)
        assert response.status_code == 200
        seen[user.username] = secret in response.content.decode()
    assert seen == {"otto": False, "mona": True, "ada": True}


def test_the_admins_posts_really_change_things(world, admin):
    """The admins' 302s above are successes, not refusals sent back to a form."""
    client = Client()
    client.force_login(admin)
    client.post(
        reverse("assignments:assign"), {"reviewer": world["rita"], "ideas": world["unassigned_ext"]}
    )
    assert Assignment.objects.filter(
        reviewer_id=world["rita"], idea__external_id=world["unassigned_ext"]
    ).exists()
    client.post(reverse("assignments:delete", kwargs={"pk": world["pending_assignment"]}))
    assert not Assignment.objects.filter(pk=world["pending_assignment"]).exists()
    client.post(reverse("judges:run_cancel", kwargs={"run_id": world["run"]}))
    assert JudgeRun.objects.get(pk=world["run"]).status == JudgeRun.Status.CANCELLED


# Query parameters the pages read, filled with what PostgreSQL refuses or cannot store: a NUL
# character, an integer past bigint, a date that is no date. Pages answer 4xx or ignore them.
HOSTILE_QUERY = {
    key: value
    for key in ("domain", "dimension", "reviewer", "source", "status", "q", "sort", "kind", "page")
    for value in ("a\x00b",)
} | {"since": "2026-13-45", "until": "\x00", "limit": "51705856892600188928", "run": "-1"}

GET_PAGES = sorted(
    {
        (name, tuple(kwargs.items()))
        for name, kwargs, method, _, codes in MATRIX
        if method == "get" and codes != NOT_GET
    }
)


@pytest.mark.parametrize("role", ["reviewer", "manager", "admin"])
def test_no_page_answers_a_server_error_to_hostile_query_parameters(request, world, role):
    client = Client(raise_request_exception=False)
    client.force_login(request.getfixturevalue(role))
    failures = []
    for name, kwargs in GET_PAGES:
        url = reverse(name, kwargs=_kwargs(dict(kwargs), world))
        for key, value in HOSTILE_QUERY.items():
            response = client.get(url, {key: value})
            if response.status_code >= 500:
                failures.append((url, key, response.status_code))
    assert failures == []
