"""Bad input is a 400 naming the parameter, row or field, never a 500: NUL characters (which
PostgreSQL text cannot hold) and integers past what a bigint column holds."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from apps.catalog.models import Patent
from tests.factories import DomainFactory

NUL = "a\x00b"
HUGE = "51705856892600188928"


@pytest.fixture
def as_role(request, reviewer, manager, admin):
    def _client(role: str) -> APIClient:
        client = APIClient()
        client.force_authenticate(request.getfixturevalue(role))
        return client

    return _client


# path, query parameter, role allowed to call it
NUL_CASES = [
    ("/api/ratings/", "reviewer", "manager"),
    ("/api/ratings/", "domain", "manager"),
    ("/api/ratings/", "dimension", "reviewer"),
    ("/api/ratings/", "status", "manager"),
    ("/api/ideas/", "domain", "reviewer"),
    ("/api/ideas/", "patent", "manager"),
    ("/api/patents/", "domain", "manager"),
    ("/api/assignments/", "domain", "admin"),
    ("/api/assignments/", "status", "admin"),
    ("/api/assignments/load/", "domain", "admin"),
    ("/api/my/assignments/", "status", "reviewer"),
    ("/api/metrics/", "domain", "manager"),
    ("/api/metrics/", "dimension", "manager"),
]


@pytest.mark.parametrize("path,param,role", NUL_CASES, ids=[f"{p}?{q}" for p, q, _ in NUL_CASES])
def test_it_answers_a_nul_character_in_a_filter_with_a_400_naming_it(as_role, path, param, role):
    response = as_role(role).get(path, {param: NUL})
    assert response.status_code == 400, response.content[:300]
    assert {e["field"] for e in response.json()["errors"]} == {param}


@pytest.mark.parametrize(
    "path,param,role",
    [
        ("/api/ratings/", "idea", "manager"),
        ("/api/assignments/", "reviewer", "admin"),
        ("/api/assignments/", "idea", "admin"),
    ],
)
@pytest.mark.parametrize("value", [HUGE, "-1", "²", "1e999"])
def test_it_answers_an_id_filter_out_of_range_with_a_400(as_role, path, param, role, value):
    response = as_role(role).get(path, {param: value})
    assert response.status_code == 400, response.content[:300]
    assert response.json()["errors"][0]["field"] == param


@pytest.mark.parametrize("path", ["/api/ratings/", "/api/ideas/", "/api/patents/", "/api/rubrics/"])
def test_it_caps_a_huge_limit_at_the_largest_page(as_role, path):
    response = as_role("manager").get(path, {"limit": HUGE})
    assert response.status_code == 200, response.content[:300]
    assert "limit=1000" in (response.json()["next"] or "limit=1000")


@pytest.mark.parametrize("path", ["/api/ratings/", "/api/ideas/", "/api/my/assignments/"])
def test_it_answers_an_offset_past_bigint_with_a_400_naming_it(as_role, path):
    response = as_role("reviewer").get(path, {"offset": HUGE})
    assert response.status_code == 400, response.content[:300]
    error = response.json()["errors"][0]
    assert (error["field"], error["value"]) == ("offset", HUGE)


@pytest.mark.parametrize("path", ["/api/ideas/{n}/", "/api/ratings/{n}/", "/api/rubrics/{n}/"])
def test_it_answers_a_path_id_past_bigint_with_a_404(as_role, path):
    assert as_role("manager").get(path.format(n=HUGE)).status_code == 404


@pytest.mark.parametrize(
    "name,content",
    [
        ("patents.csv", "external_id,domain,title\nUS-1,nlp,Filter\x00 kit\n"),
        (
            "patents.jsonl",
            '{"external_id": "US-1", "domain": "nlp", "title": "Filter\\u0000kit"}\n',
        ),
    ],
)
def test_it_refuses_an_import_with_a_nul_character_naming_row_and_field(admin, name, content):
    DomainFactory(key="nlp")
    client = APIClient()
    client.force_authenticate(admin)
    upload = SimpleUploadedFile(name, content.encode())
    response = client.post("/api/imports/patents/", {"file": upload}, format="multipart")
    assert response.status_code == 400, response.content[:300]
    error = response.json()["errors"][0]
    # CSV rows count the header as row 1; JSON Lines rows are line numbers.
    assert (error["row"], error["field"]) == (2 if name.endswith(".csv") else 1, "title")
    assert "NUL" in error["message"] and error["value"] == "Filter\u2400" + (
        " kit" if name.endswith(".csv") else "kit"
    )
    assert Patent.objects.count() == 0
