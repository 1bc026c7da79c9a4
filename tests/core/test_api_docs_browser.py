"""The API reference renders under the strict CSP and leads back to the product."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.django_db, pytest.mark.browser]


def test_the_api_docs_render_and_have_a_way_back(page, login, manager):
    login(manager)
    page.goto("/api/docs/")
    page.wait_for_selector(".swagger-ui .opblock", timeout=20_000)
    back = page.get_by_role("link", name="← Back to Pluralist")
    back.click()
    page.wait_for_load_state("networkidle")
    assert "/api/docs/" not in page.url


def test_a_reviewer_reaches_the_api_docs_from_the_menu_and_comes_back(page, login, reviewer):
    """Reviewers keep the "API" link (their token reads and writes their own ratings); the
    docs page must lead back to their queue."""
    login(reviewer)
    page.goto("/screening/")
    page.locator("nav.mainnav").get_by_role("link", name="API").click()
    page.wait_for_selector(".swagger-ui .opblock", timeout=20_000)
    assert "/api/docs/" in page.url
    back = page.get_by_role("link", name="← Back to Pluralist")
    assert back.is_visible()
    back.click()
    page.wait_for_load_state("networkidle")
    assert "/api/docs/" not in page.url
    assert page.locator("nav.mainnav").get_by_role("link", name="My queue").is_visible()
