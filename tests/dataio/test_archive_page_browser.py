"""An admin downloads the installation archive and loads it into an empty installation, in a
real browser."""

from __future__ import annotations

import pytest

from apps.catalog.models import Idea, Patent
from apps.dataio.services.imports import import_file
from apps.screening.models import Rating
from tests.dataio.conftest import example

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_exports_then_restores_the_installation(page, login, admin, tmp_path):
    for kind in ("patents", "ideas", "reviewers", "ratings"):
        import_file(kind=kind, content=example(f"{kind}.csv"), filename=f"{kind}.csv")
    states = sorted(Rating.objects.values_list("idea__external_id", "dimension__key", "status"))
    login(admin)
    page.goto("/catalog/admin/")
    page.get_by_role("link", name="Export or import the whole installation").click()
    assert page.title().startswith("Installation archive")
    assert "already holds data" in page.content()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download the archive").click()
    path = tmp_path / "backup.zip"
    download.value.save_as(path)

    Rating.objects.all().delete()
    Idea.objects.all().delete()
    Patent.objects.all().delete()
    from apps.accounts.models import User

    User.objects.filter(role=User.Role.REVIEWER).delete()
    page.reload()
    page.locator("input[type=file]").set_input_files(str(path))
    page.get_by_role("button", name="Import the archive").click()
    page.get_by_role("status").filter(has_text="Archive imported.").wait_for()
    assert "Imported ratings" in page.content()
    after = sorted(Rating.objects.values_list("idea__external_id", "dimension__key", "status"))
    assert after == states
