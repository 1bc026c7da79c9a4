"""Every role against every endpoint of the catalog, screening and assignments APIs and the
assignments page, with the exact status code expected.

Personas (tests/conftest.py): anonymous; rita (reviewer, NLP, assigned the idea); otto (another
NLP reviewer on the same idea); oscar (outsider: reviewer of Materials only); mona (manager: reads,
never writes); ada (admin: manages).
"""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.panels.models import PanelRun
from apps.screening.models import Assignment, Rating, Rubric
from apps.screening.services.ratings import rating_submit
from tests.factories import IdeaFactory

ROLES = ["anonymous", "reviewer", "other_reviewer", "outsider", "manager", "admin"]
RATING_BODY = {"scores": {"specificity": 2}}

# path (formatted with the world's ids), method, body, codes for: anon rita otto oscar mona ada.
# Anonymous API calls get 401 (no credentials), signed-in roles 403 (not allowed): docs/api.md.
MATRIX: list[tuple[str, str, Any, tuple[int, ...]]] = [
    # Decide's ranking: managers and admins read (404 until the ranking is computed)
    ("/api/decisions/ranking/", "get", None, (401, 403, 403, 403, 404, 404)),
    ("/api/decisions/ranking/", "post", {}, (401, 403, 403, 403, 405, 405)),
    # Decision marks: managers and admins record and read them (the one write a manager has,
    # issue 26); reviewers 403. 400 for them: no ranking computed in this world yet.
    (
        "/api/decisions/marks/{idea}/",
        "put",
        {"mark": "take_forward", "note": "n"},
        (401, 403, 403, 403, 400, 400),
    ),
    ("/api/decisions/marks/{idea}/", "get", None, (401, 403, 403, 403, 405, 405)),
    ("/api/decisions/marks/999999/", "put", {"mark": "hold"}, (401, 403, 403, 403, 404, 404)),
    ("/api/decisions/marks/?domain=nlp", "get", None, (401, 403, 403, 403, 200, 200)),
    ("/api/decisions/marks/", "get", None, (401, 403, 403, 403, 400, 400)),
    ("/api/decisions/marks/", "post", {}, (401, 403, 403, 403, 405, 405)),
    ("/api/decisions/marks/{idea}/history/", "get", None, (401, 403, 403, 403, 200, 200)),
    ("/api/decisions/marks/999999/history/", "get", None, (401, 403, 403, 403, 404, 404)),
    # Import jobs (large uploads imported by the worker): admins only, like the imports.
    ("/api/imports/jobs/", "get", None, (401, 403, 403, 403, 403, 200)),
    ("/api/imports/jobs/", "post", {}, (401, 403, 403, 403, 403, 405)),
    ("/api/imports/jobs/999999/", "get", None, (401, 403, 403, 403, 403, 404)),
    ("/api/domains/", "get", None, (401, 200, 200, 200, 200, 200)),
    ("/api/domains/", "post", {"key": "cs", "name": "CS"}, (401, 403, 403, 403, 403, 201)),
    ("/api/domains/{domain}/", "get", None, (401, 200, 200, 200, 200, 200)),
    ("/api/domains/{domain}/", "patch", {"name": "Language"}, (401, 403, 403, 403, 403, 200)),
    ("/api/domains/{domain}/", "delete", None, (401, 403, 403, 403, 403, 405)),
    ("/api/patents/", "get", None, (401, 200, 200, 200, 200, 200)),
    (
        "/api/patents/",
        "post",
        {"external_id": "US-9", "domain": "nlp", "title": "T"},
        (401, 403, 403, 403, 403, 201),
    ),
    ("/api/patents/{patent}/", "get", None, (401, 200, 200, 404, 200, 200)),
    ("/api/patents/{patent}/", "patch", {"title": "New"}, (401, 403, 403, 403, 403, 200)),
    ("/api/ideas/", "get", None, (401, 200, 200, 200, 200, 200)),
    (
        "/api/ideas/",
        "post",
        {"external_id": "i-9", "patent": "{patent_ext}", "title": "T"},
        (401, 403, 403, 403, 403, 201),
    ),
    ("/api/ideas/{idea}/", "get", None, (401, 200, 200, 404, 200, 200)),
    (
        "/api/ideas/{idea}/",
        "put",
        {"external_id": "{idea_ext}", "patent": "{patent_ext}", "title": "T"},
        (401, 403, 403, 403, 403, 200),
    ),
    ("/api/rubrics/", "get", None, (401, 200, 200, 200, 200, 200)),
    ("/api/rubrics/", "post", {"key": "x"}, (401, 403, 403, 403, 403, 403)),
    ("/api/rubrics/{rubric}/", "get", None, (401, 200, 200, 200, 200, 200)),
    ("/api/ratings/", "get", None, (401, 200, 200, 200, 200, 200)),
    ("/api/ratings/", "post", {}, (401, 403, 403, 403, 403, 403)),
    ("/api/ratings/{rita_rating}/", "get", None, (401, 200, 404, 404, 200, 200)),
    ("/api/ratings/{rita_rating}/", "put", {}, (401, 403, 403, 403, 403, 403)),
    ("/api/ratings/{rita_rating}/history/", "get", None, (401, 200, 404, 404, 200, 200)),
    ("/api/ideas/{idea}/my-rating/", "get", None, (401, 200, 200, 404, 403, 403)),
    ("/api/ideas/{idea}/my-rating/", "put", RATING_BODY, (401, 200, 200, 404, 403, 403)),
    ("/api/ideas/{idea}/my-rating/", "post", RATING_BODY, (401, 200, 200, 404, 403, 403)),
    ("/api/ideas/{unassigned_idea}/my-rating/", "put", RATING_BODY, (401, 403, 403, 404, 403, 403)),
    ("/api/ideas/{idea}/decline/", "post", {"reason": "no"}, (401, 200, 200, 404, 403, 403)),
    # Findings: managers and admins read a domain's; the idea's findings are 404 to whoever
    # cannot see the idea, and blind for its reviewers (tests/findings/test_api.py). 404 for
    # those who may read: no findings snapshot exists in this world.
    ("/api/findings/?domain=nlp", "get", None, (401, 403, 403, 403, 404, 404)),
    ("/api/findings/recompute/", "post", {}, (401, 403, 403, 403, 202, 202)),
    ("/api/ideas/{idea}/findings/", "get", None, (401, 404, 404, 404, 404, 404)),
    ("/api/assignments/", "get", None, (401, 403, 403, 403, 403, 200)),
    (
        "/api/assignments/",
        "post",
        {"reviewer": "rita", "idea": "{unassigned_idea}"},
        (401, 403, 403, 403, 403, 201),
    ),
    (
        "/api/assignments/bulk-balanced/",
        "post",
        {"domain": "nlp", "per_idea": 2},
        (401, 403, 403, 403, 403, 200),
    ),
    ("/api/assignments/load/", "get", None, (401, 403, 403, 403, 403, 200)),
    ("/api/assignments/{pending_assignment}/", "get", None, (401, 403, 403, 403, 403, 200)),
    ("/api/assignments/{pending_assignment}/", "delete", None, (401, 403, 403, 403, 403, 204)),
    ("/api/my/assignments/", "get", None, (401, 200, 200, 200, 403, 403)),
    ("/api/auth/token/", "delete", None, (401, 204, 204, 204, 204, 204)),
    ("/api/no-such-endpoint/", "get", None, (404, 404, 404, 404, 404, 404)),
    ("/api/schema/", "get", None, (200, 200, 200, 200, 200, 200)),
    # panels: managers and admins read a run; an unknown run is 404 for them
    ("/api/panels/runs/{panel_run}/", "get", None, (401, 403, 403, 403, 200, 200)),
    ("/api/panels/runs/999999/", "get", None, (401, 403, 403, 403, 404, 404)),
    ("/api/panels/runs/{panel_run}/", "post", {}, (401, 403, 403, 403, 405, 405)),
    ("/api/docs/", "get", None, (200, 200, 200, 200, 200, 200)),
    # The HTML page: anonymous users are sent to the login form.
    ("/screening/assignments/", "get", None, (302, 403, 403, 403, 403, 200)),
    (
        "/screening/assignments/bulk/",
        "post",
        {"domain": "{domain}", "per_idea": 1},
        (302, 403, 403, 403, 403, 302),
    ),
    (
        "/screening/assignments/assign/",
        "post",
        {"reviewer": "{rita}", "ideas": "{unassigned_ext}"},
        (302, 403, 403, 403, 403, 302),
    ),
    (
        "/screening/assignments/{pending_assignment}/delete/",
        "post",
        {},
        (302, 403, 403, 403, 403, 302),
    ),
]


@pytest.fixture
def world(request, reviewer, other_reviewer, outsider, manager, admin, idea) -> dict[str, Any]:
    rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 1})
    rating_submit(reviewer=other_reviewer, idea=idea, scores={"specificity": 1})
    unassigned = IdeaFactory(patent=idea.patent)
    pending = Assignment.objects.create(
        reviewer=other_reviewer, idea=IdeaFactory(patent=idea.patent)
    )
    return {
        "domain": idea.patent.domain.pk,
        "patent": idea.patent.pk,
        "patent_ext": idea.patent.external_id,
        "idea": idea.pk,
        "idea_ext": idea.external_id,
        "unassigned_idea": unassigned.pk,
        "unassigned_ext": unassigned.external_id,
        "rubric": Rubric.objects.get(is_default=True).pk,
        "rita": reviewer.pk,
        "rita_rating": Rating.objects.get(reviewer=reviewer, dimension__key="specificity").pk,
        "pending_assignment": pending.pk,
        "panel_run": PanelRun.objects.create(
            domain=idea.patent.domain, persona_source="invented", budget_tokens=1000, model="m"
        ).pk,
    }


def _fill(value: Any, ids: dict[str, Any]) -> Any:
    if (
        isinstance(value, str)
        and value.startswith("{")
        and value.endswith("}")
        and value[1:-1] in ids
    ):
        return ids[value[1:-1]]
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    return value


CASES = [
    pytest.param(path, method, body, role, expected[i], id=f"{method.upper()} {path} as {role}")
    for path, method, body, expected in MATRIX
    for i, role in enumerate(ROLES)
]


@pytest.mark.parametrize("path,method,body,role,expected", CASES)
def test_each_role_gets_exactly_the_expected_status(
    request, world, path, method, body, role, expected
):
    client = APIClient()
    if role != "anonymous":
        client.force_login(request.getfixturevalue(role))
    url = path.format(**world)
    html = not url.startswith("/api/")
    kwargs: dict[str, Any] = {}
    if body is not None:
        kwargs = (
            {"data": _fill(body, world)} if html else {"data": _fill(body, world), "format": "json"}
        )
    response = getattr(client, method)(url, **kwargs)
    assert response.status_code == expected, getattr(response, "content", b"")[:300]
    if (
        not html
        and expected in (400, 401, 403, 404)
        and url.startswith("/api/")
        and "schema" not in url
    ):
        assert set(response.json()) == {"detail", "errors"}
