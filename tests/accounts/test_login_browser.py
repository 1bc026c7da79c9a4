import pytest

pytestmark = pytest.mark.browser


def test_a_wrong_password_is_refused_with_a_message(page, reviewer):
    page.goto("/accounts/login/")
    page.fill("input[name=username]", reviewer.username)
    page.fill("input[name=password]", "not-the-password")
    page.click("button[type=submit]")
    assert page.locator("[role=alert]").inner_text().startswith("Your username and password")
