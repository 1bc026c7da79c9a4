"""The catalog API: everyone signed in reads, reviewers only their domains, admins write."""

import pytest
from rest_framework.test import APIClient

from apps.catalog.models import Domain, Idea, Patent
from tests.factories import IdeaFactory, PatentFactory


@pytest.fixture
def api():
    def _api(user=None):
        client = APIClient()
        if user is not None:
            client.force_login(user)
        return client

    return _api


@pytest.fixture
def two_domains(domain, other_domain):
    nlp = PatentFactory(domain=domain, external_id="US-NLP-1")
    mat = PatentFactory(domain=other_domain, external_id="US-MAT-1")
    for i in range(3):
        IdeaFactory(patent=nlp, external_id=f"nlp-{i}")
    IdeaFactory(patent=mat, external_id="mat-0")
    return nlp, mat


def test_ideas_are_listed_paginated_and_filtered_by_domain(api, manager, two_domains):
    client = api(manager)
    page = client.get("/api/ideas/", {"limit": 2}).json()
    assert page["count"] == 4
    assert [i["external_id"] for i in page["results"]] == ["mat-0", "nlp-0"]
    assert page["next"] is not None
    nlp = client.get("/api/ideas/", {"domain": "nlp"}).json()
    assert {i["external_id"] for i in nlp["results"]} == {"nlp-0", "nlp-1", "nlp-2"}
    assert nlp["results"][0]["domain"] == "nlp" and nlp["results"][0]["patent"] == "US-NLP-1"
    assert client.get("/api/patents/", {"domain": "materials"}).json()["count"] == 1


def test_a_reviewer_sees_only_the_ideas_and_patents_of_their_domains(api, outsider, two_domains):
    nlp_patent, mat_patent = two_domains
    client = api(outsider)
    assert [i["external_id"] for i in client.get("/api/ideas/").json()["results"]] == ["mat-0"]
    assert client.get("/api/ideas/", {"domain": "nlp"}).json()["count"] == 0
    nlp_idea = Idea.objects.get(external_id="nlp-0")
    assert client.get(f"/api/ideas/{nlp_idea.pk}/").status_code == 404
    assert client.get(f"/api/patents/{nlp_patent.pk}/").status_code == 404
    assert client.get(f"/api/patents/{mat_patent.pk}/").status_code == 200
    # Domains themselves are public to every signed-in user.
    assert client.get("/api/domains/").json()["count"] == 2


def test_admins_create_and_update_catalog_rows(api, admin, domain):
    client = api(admin)
    created = client.post("/api/domains/", {"key": "cs", "name": "Computer Science"}, format="json")
    assert created.status_code == 201
    assert created.json()["rubric"] is None
    patent = client.post(
        "/api/patents/",
        {"external_id": "US-1", "domain": "cs", "title": "A sorting circuit"},
        format="json",
    )
    assert patent.status_code == 201
    idea = client.post(
        "/api/ideas/",
        {"external_id": "cs-1", "patent": "US-1", "title": "Faster routers"},
        format="json",
    )
    assert idea.status_code == 201
    assert idea.json()["domain"] == "cs"
    patched = client.patch(
        f"/api/ideas/{idea.json()['id']}/", {"title": "Faster edge routers"}, format="json"
    )
    assert patched.status_code == 200
    assert Idea.objects.get(external_id="cs-1").title == "Faster edge routers"
    renamed = client.put(
        f"/api/domains/{domain.pk}/", {"key": "nlp", "name": "Language"}, format="json"
    )
    assert renamed.status_code == 200
    assert Domain.objects.get(pk=domain.pk).name == "Language"
    rubric = client.patch(f"/api/domains/{domain.pk}/", {"rubric": "pbig"}, format="json")
    assert rubric.json()["rubric"] == "pbig"


def test_catalog_errors_name_the_field_and_value(api, admin, domain, two_domains):
    client = api(admin)
    duplicate = client.post(
        "/api/patents/",
        {"external_id": "US-NLP-1", "domain": "nlp", "title": "Again"},
        format="json",
    )
    assert duplicate.status_code == 400
    assert duplicate.json()["detail"] == "The patent was not saved."
    assert [(e["field"], e["value"]) for e in duplicate.json()["errors"]] == [
        ("external_id", "US-NLP-1")
    ]
    unknown = client.post(
        "/api/ideas/", {"external_id": "x", "patent": "US-404", "title": "t"}, format="json"
    )
    assert unknown.status_code == 400
    assert [(e["field"], e["value"]) for e in unknown.json()["errors"]] == [("patent", "US-404")]
    missing = client.post("/api/domains/", {"name": "No key"}, format="json")
    assert missing.json()["errors"][0]["field"] == "key"
    assert Patent.objects.count() == 2


@pytest.mark.parametrize("persona", ["reviewer", "manager"])
def test_only_admins_write_the_catalog(api, request, persona, domain):
    client = api(request.getfixturevalue(persona))
    response = client.post("/api/domains/", {"key": "cs", "name": "CS"}, format="json")
    assert response.status_code == 403
    assert set(response.json()) == {"detail", "errors"}
    assert (
        client.patch(f"/api/domains/{domain.pk}/", {"name": "x"}, format="json").status_code == 403
    )
    assert not Domain.objects.filter(key="cs").exists()
