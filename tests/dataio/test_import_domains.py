"""Domains named by an import (issue 21.10): once ratings exist, a new domain needs an explicit
yes (command, page, API); an import never renames an existing domain."""

from __future__ import annotations

import io
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from playwright.sync_api import expect

from apps.catalog.models import Domain, Patent
from apps.core.errors import ApplicationError
from apps.dataio.services.imports import import_file
from tests.dataio.conftest import example

MISSPELLED = b"external_id,domain,title\nUS20000001,nlpp,A patent in a misspelled domain\n"
RUBRIC = (
    b"key: extra\nname: Extra\ndomains: [nlp, brand-new]\n"
    b"dimensions:\n  - key: q\n    scale: {min: 1, max: 3}\n"
)


@pytest.mark.django_db
def test_a_misspelled_domain_is_refused_once_ratings_exist_and_names_the_row(examples_loaded):
    with pytest.raises(ApplicationError) as refused:
        import_file(kind="patents", content=MISSPELLED, filename="p.csv")
    error = refused.value.errors[0]
    assert (error.field, error.row, error.value) == ("domain", 2, "nlpp")
    assert "known: materials, nlp" in error.message and "--create-domains" in error.message
    assert not Domain.objects.filter(key="nlpp").exists()
    # The dry run says the same, so the admin sees it before importing.
    with pytest.raises(ApplicationError):
        import_file(kind="patents", content=MISSPELLED, filename="p.csv", dry_run=True)


@pytest.mark.django_db
def test_an_explicit_yes_creates_the_domain(examples_loaded):
    result = import_file(kind="patents", content=MISSPELLED, filename="p.csv", create_domains=True)
    assert result.notes == ["New domains: nlpp."]
    assert Patent.objects.get(external_id="US20000001").domain.key == "nlpp"


@pytest.mark.django_db
def test_a_new_installation_creates_domains_without_a_flag(db):
    import_file(kind="patents", content=example("patents.csv"), filename="patents.csv")
    assert set(Domain.objects.values_list("key", flat=True)) == {"nlp", "materials"}


@pytest.mark.django_db
def test_an_import_never_renames_an_existing_domain(examples_loaded):
    Domain.objects.filter(key="nlp").update(name="Language technology")
    result = import_file(kind="patents", content=example("patents.csv"), filename="patents.csv")
    assert Domain.objects.get(key="nlp").name == "Language technology"
    assert any("keeps its name 'Language technology'" in n for n in result.notes)


@pytest.mark.django_db
def test_a_rubric_naming_a_new_domain_needs_the_same_yes(examples_loaded):
    with pytest.raises(ApplicationError) as refused:
        import_file(kind="rubric", content=RUBRIC, filename="extra.yaml")
    assert refused.value.errors[0].field == "domains"
    assert refused.value.errors[0].value == "brand-new"
    import_file(kind="rubric", content=RUBRIC, filename="extra.yaml", create_domains=True)
    assert Domain.objects.get(key="brand-new").rubric.key == "extra"


@pytest.mark.django_db
def test_the_command_takes_create_domains(examples_loaded, tmp_path):
    path = tmp_path / "p.csv"
    path.write_bytes(MISSPELLED)
    err = StringIO()
    with pytest.raises(CommandError):
        call_command("import_patents", str(path), stdout=StringIO(), stderr=err)
    assert "row 2, domain: is not a domain here" in err.getvalue()
    out = StringIO()
    call_command("import_patents", str(path), "--create-domains", stdout=out)
    assert "New domains: nlpp." in out.getvalue()


@pytest.mark.django_db
def test_the_api_takes_create_domains(examples_loaded, admin, client):
    client.force_login(admin)

    def post(**extra: object):
        upload = io.BytesIO(MISSPELLED)
        upload.name = "p.csv"
        return client.post("/api/imports/patents/", {"file": upload, **extra})

    refused = post()
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["value"] == "nlpp"
    assert post(create_domains="true").status_code == 201


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_page_refuses_a_new_domain_until_the_box_is_ticked(
    page, login, admin, examples_loaded, tmp_path
):
    path = tmp_path / "patents.csv"
    path.write_bytes(MISSPELLED)
    login(admin)
    page.goto("/catalog/admin/")
    panel = page.locator("#import-patents")
    panel.locator("input[type=file]").set_input_files(str(path))
    panel.get_by_role("button", name="Import patents").click()
    expect(page.locator("#import-patents")).to_contain_text("is not a domain here")
    assert not Domain.objects.filter(key="nlpp").exists()

    panel = page.locator("#import-patents")
    panel.locator("input[type=file]").set_input_files(str(path))
    panel.locator("input[name=create_domains]").check()
    panel.get_by_role("button", name="Import patents").click()
    expect(page.locator("#import-patents .msg-success")).to_be_visible()
    expect(page.locator("#import-patents")).to_contain_text("New domains: nlpp.")
