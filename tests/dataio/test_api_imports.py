"""POST /api/imports/<kind>/: admins only; 201 / 200 (dry run) with counts, 400 with every error."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from apps.catalog.models import Idea, Patent
from tests.dataio.conftest import example, table_counts

pytestmark = pytest.mark.django_db


def post(client: APIClient, kind: str, name: str, content: bytes | None = None, **extra: object):
    data = {
        "file": SimpleUploadedFile(name, content if content is not None else example(name)),
        **extra,
    }
    return client.post(f"/api/imports/{kind}/", data, format="multipart")


@pytest.fixture
def api() -> APIClient:
    return APIClient()


def test_an_admin_imports_a_file_and_gets_201_with_counts(api, admin):
    api.force_authenticate(admin)
    response = post(api, "patents", "patents.jsonl")
    assert response.status_code == 201
    body = response.json()
    assert (
        body["kind"],
        body["rows"],
        body["created"],
        body["updated"],
        body["unchanged"],
        body["dry_run"],
    ) == ("patents", 4, 4, 0, 0, False)
    assert Patent.objects.count() == 4


def test_a_dry_run_returns_200_and_saves_nothing(api, admin):
    api.force_authenticate(admin)
    response = post(api, "patents", "patents.csv", dry_run="true")
    assert response.status_code == 200 and response.json()["created"] == 4
    assert Patent.objects.count() == 0


def test_a_rubric_can_be_made_the_default(api, admin):
    api.force_authenticate(admin)
    assert post(api, "rubric", "rubric.json", default="true").status_code == 201
    from apps.screening.models import Rubric

    assert Rubric.objects.get(is_default=True).key == "desk-check"


def test_a_bad_file_gets_400_with_every_error_and_changes_nothing(api, admin, catalog):
    api.force_authenticate(admin)
    before = table_counts()
    response = post(
        api, "ideas", "ideas.csv", b"external_id,patent,title,colour\nidea-9,US0,T,red\n"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {
            "row": 1,
            "field": "colour",
            "message": response.json()["errors"][0]["message"],
            "value": "colour",
        }
    ]
    response = post(
        api, "ideas", "ideas.csv", b"external_id,patent,title\nidea-9,US0,T\n,US10000001,\n"
    )
    body = response.json()
    assert response.status_code == 400 and "nothing was imported" in body["detail"]
    assert {(e["row"], e["field"]) for e in body["errors"]} == {
        (2, "patent"),
        (3, "external_id"),
        (3, "title"),
    }
    assert table_counts() == before
    assert not Idea.objects.filter(external_id="idea-9").exists()


def test_a_request_without_a_file_gets_400(api, admin):
    api.force_authenticate(admin)
    response = api.post("/api/imports/patents/", {}, format="multipart")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "file"


def test_an_unknown_kind_is_404(api, admin):
    api.force_authenticate(admin)
    assert post(api, "widgets", "patents.csv").status_code == 404


@pytest.mark.parametrize("who", ["manager", "reviewer"])
def test_reviewers_and_managers_get_403(api, request, who):
    api.force_authenticate(request.getfixturevalue(who))
    assert post(api, "patents", "patents.csv").status_code == 403
    assert not Patent.objects.filter(title__startswith="Method for summarising").exists()


def test_anonymous_requests_are_refused(api):
    assert post(api, "patents", "patents.csv").status_code in (401, 403)
    assert Patent.objects.count() == 0


def test_the_schema_documents_the_import_endpoint(api, admin):
    api.force_authenticate(admin)
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    op = schema["paths"]["/api/imports/{kind}/"]["post"]
    assert "multipart/form-data" in op["requestBody"]["content"]
    assert {"200", "201", "400"} <= set(op["responses"])
