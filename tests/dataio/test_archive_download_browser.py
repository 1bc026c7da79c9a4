"""The archive download tells the admin what is happening (issue 21.10): building the zip takes
seconds, and the browser shows nothing until the file arrives."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_download_shows_its_progress_until_the_file_arrives(page, login, admin):
    login(admin)
    page.goto("/catalog/admin/archive/")
    status = page.locator("#archive-export-status")
    expect(status).to_be_hidden()
    with page.expect_download():
        page.get_by_role("button", name="Download the archive").click()
        expect(status).to_be_visible()
    expect(status).to_have_text("The archive is ready: your browser is downloading it.")
    expect(page.get_by_role("button", name="Download the archive")).to_be_enabled()
