"""The Data & imports page (/catalog/admin/) and the Django admin import view: admins only."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from apps.catalog.models import Patent
from tests.dataio.conftest import example, table_counts

pytestmark = pytest.mark.django_db


def upload(name: str, content: bytes | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content if content is not None else example(name))


def test_the_page_shows_counts_and_a_form_per_kind(client, admin, examples_loaded):
    client.force_login(admin)
    response = client.get(reverse("catalog:admin_home"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>Data &amp; imports</h1>" in html
    for kind in ["rubric", "patents", "ideas", "reviewers", "ratings"]:
        assert f'id="import-{kind}"' in html
        assert reverse("catalog:import_upload", args=[kind]) in html
    assert 'catalog-count-value">35<' in html  # scored ratings of the examples
    assert 'catalog-count-value">6<' in html  # ideas


@pytest.mark.parametrize("who", ["manager", "reviewer", "outsider"])
def test_managers_and_reviewers_get_403(client, request, who):
    client.force_login(request.getfixturevalue(who))
    assert client.get(reverse("catalog:admin_home")).status_code == 403
    response = client.post(
        reverse("catalog:import_upload", args=["patents"]), {"file": upload("patents.csv")}
    )
    assert response.status_code == 403
    assert not Patent.objects.filter(title__startswith="Method for summarising").exists()


def test_anonymous_visitors_are_sent_to_login(client):
    response = client.get(reverse("catalog:admin_home"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_an_admin_upload_shows_the_summary(client, admin):
    client.force_login(admin)
    response = client.post(
        reverse("catalog:import_upload", args=["patents"]), {"file": upload("patents.csv")}
    )
    assert response.status_code == 200
    assert (
        "Imported patents (4 rows read): 4 created, 0 updated, 0 unchanged."
        in response.content.decode()
    )
    assert Patent.objects.count() == 4


def test_a_dry_run_upload_saves_nothing(client, admin):
    client.force_login(admin)
    response = client.post(
        reverse("catalog:import_upload", args=["patents"]),
        {"file": upload("patents.csv"), "dry_run": "on"},
    )
    assert "nothing saved: would be 4 created" in response.content.decode()
    assert Patent.objects.count() == 0


def test_a_bad_upload_shows_a_table_of_errors_and_changes_nothing(client, admin, reviewer_alice):
    client.force_login(admin)
    before = table_counts()
    bad = (
        b"idea,reviewer,dimension,score\n"
        b"idea-002,alice,specificity,2\n"
        b"idea-002,alice,technical_validity,3\n"
        b"idea-404,alice,specificity,1\n"
    )
    response = client.post(
        reverse("catalog:import_upload", args=["ratings"]), {"file": upload("r.csv", bad)}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "catalog-error-table" in html
    assert "technical_validity must be left empty" in html
    assert "<code>idea-404</code>" in html
    assert table_counts() == before


def test_an_htmx_upload_returns_only_the_panel(client, admin):
    client.force_login(admin)
    response = client.post(
        reverse("catalog:import_upload", args=["rubric"]),
        {"file": upload("rubric.yaml"), "make_default": "on"},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<section class="card catalog-panel" id="import-rubric"')
    assert (
        "quick-triage is now the default" not in html
        and "Quick triage is now the default rubric." in html
    )


def test_the_django_admin_import_view_works_for_a_staff_admin(client, admin):
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    changelist = client.get(reverse("admin:catalog_patent_changelist"))
    assert "Import from file" in changelist.content.decode()
    url = reverse("admin:catalog_patent_import")
    assert client.get(url).status_code == 200
    response = client.post(url, {"kind_choice": "patents", "file": upload("patents.csv")})
    assert response.status_code == 200
    assert Patent.objects.count() == 4
    bad = client.post(
        url,
        {"kind_choice": "ideas", "file": upload("i.csv", b"external_id,patent,title\nx,US0,T\n")},
    )
    assert (
        bad.status_code == 400
        and "is not the external_id of a stored patent" in bad.content.decode()
    )


def test_the_django_admin_lists_ratings_read_only(client, admin, examples_loaded):
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    assert client.get(reverse("admin:screening_rating_changelist")).status_code == 200
    from apps.screening.models import Rating

    rating = Rating.objects.first()
    page = client.get(reverse("admin:screening_rating_change", args=[rating.pk]))
    assert page.status_code == 200
    assert (
        client.post(
            reverse("admin:screening_rating_change", args=[rating.pk]), {"score": 1}
        ).status_code
        == 403
    )
    assert client.get(reverse("admin:screening_rubric_changelist")).status_code == 200
    assert client.get(reverse("admin:screening_assignment_changelist")).status_code == 200
    assert client.get(reverse("admin:catalog_idea_changelist") + "?q=brief").status_code == 200
