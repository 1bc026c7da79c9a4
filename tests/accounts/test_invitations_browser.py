"""End to end: an admin invites an imported reviewer, who chooses a password and signs in;
later the reviewer resets it through "Forgot your password". Django's own views throughout."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from playwright.sync_api import expect

from apps.accounts.models import Invitation, User
from tests.accounts.reset_mail import deliver_queued_reset_mails

pytestmark = [pytest.mark.browser]


def _link(message) -> str:
    return re.search(r"https?://\S+/accounts/reset/\S+/", message.body).group(0)


def _sign_in(page, username: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")


def test_an_invited_reviewer_chooses_a_password_signs_in_and_later_resets_it(
    browser, live_server, page, login, admin, domain
):
    imported = User.objects.create_user(
        username="ivy", email="ivy@example.com", first_name="Ivy", role=User.Role.REVIEWER
    )
    User.objects.create_user(username="nomail", role=User.Role.REVIEWER)
    assert not imported.has_usable_password()

    login(admin)
    page.locator("nav.mainnav").get_by_role("link", name="People").click()
    expect(page.locator("h1")).to_have_text("People and invitations")
    row = page.locator("#person-ivy")
    expect(row).to_contain_text("No password yet")
    expect(
        page.locator("#person-nomail").get_by_role("button", name="E-mail invitation")
    ).to_be_disabled()
    row.get_by_role("button", name="E-mail invitation").click()
    expect(page.locator(".msg-success")).to_contain_text(
        "Invitation e-mailed to Ivy <ivy@example.com>"
    )
    assert len(mail.outbox) == 1
    invitation = mail.outbox[0]
    assert invitation.to == ["ivy@example.com"]
    assert invitation.subject == "You are invited to Pluralist"
    assert "Your username: ivy" in invitation.body

    # An account without e-mail: the admin copies the link instead.
    page.locator("#person-nomail").get_by_role("button", name="Copy link").click()
    expect(page.locator("#invite-link")).to_contain_text("Invitation link for nomail")
    copied = page.locator("#invite-link-url").input_value()
    assert "/accounts/reset/" in copied
    page.screenshot(path="/tmp/rux-invitations.png", full_page=True)
    assert list(Invitation.objects.values_list("user__username", "channel").order_by("id")) == [
        ("ivy", "email"),
        ("nomail", "link"),
    ]

    # Ivy, in her own browser, follows the link.
    context = browser.new_context(base_url=live_server.url)
    ivy = context.new_page()
    ivy.set_default_timeout(10_000)
    try:
        ivy.goto(_link(invitation))
        expect(ivy.locator("h1")).to_have_text("Choose your password")
        expect(ivy.locator("body")).to_contain_text("For the account ivy")
        ivy.fill("#id_new_password1", "ivy")
        ivy.fill("#id_new_password2", "ivy")
        ivy.get_by_role("button", name="Save my password").click()
        expect(ivy.locator(".errorlist")).to_contain_text("too short")
        ivy.screenshot(path="/tmp/rux-set-password-error.png", full_page=True)
        ivy.fill("#id_new_password1", "amber-lantern-42")
        ivy.fill("#id_new_password2", "amber-lantern-42")
        ivy.get_by_role("button", name="Save my password").click()
        expect(ivy.locator("#reset-complete")).to_contain_text("Your password is saved")
        _sign_in(ivy, "ivy", "amber-lantern-42")
        expect(ivy.locator("h1")).to_have_text("My queue")

        # The link worked once.
        ivy.goto(_link(invitation))
        expect(ivy.locator("#invalid-link")).to_be_visible()

        # Weeks later: forgotten. The login page leads to a reset by e-mail.
        ivy.get_by_role("button", name="Log out").click()
        ivy.goto("/accounts/login/")
        ivy.get_by_role("link", name="Forgot your password").click()
        ivy.fill("#id_email", "IVY@example.com")
        ivy.get_by_role("button", name="Send the link").click()
        expect(ivy.locator("#reset-sent")).to_contain_text("Check your e-mail")
        # The mail leaves from a task, after the answer (its timing tells nothing).
        assert len(mail.outbox) == 1
        assert deliver_queued_reset_mails() == 1
        assert len(mail.outbox) == 2
        reset = mail.outbox[1]
        assert reset.to == ["ivy@example.com"]
        ivy.goto(_link(reset))
        ivy.fill("#id_new_password1", "copper-window-77")
        ivy.fill("#id_new_password2", "copper-window-77")
        ivy.get_by_role("button", name="Save my password").click()
        expect(ivy.locator("#reset-complete")).to_be_visible()
        _sign_in(ivy, "ivy", "amber-lantern-42")
        expect(ivy.locator("[role=alert]")).to_contain_text("didn't match")
        _sign_in(ivy, "ivy", "copper-window-77")
        expect(ivy.locator("h1")).to_have_text("My queue")
    finally:
        context.close()

    page.goto("/accounts/invitations/")
    expect(page.locator("#person-ivy")).to_contain_text("Has signed in")


def test_an_unknown_address_gets_the_same_answer_and_no_mail(page, db, live_server):
    page.goto("/accounts/password-reset/")
    page.fill("#id_email", "nobody@example.com")
    page.get_by_role("button", name="Send the link").click()
    expect(page.locator("#reset-sent")).to_be_visible()
    deliver_queued_reset_mails()
    assert mail.outbox == []
