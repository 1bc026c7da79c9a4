"""Invitation services and the People page, without a browser."""

from __future__ import annotations

import pytest
from django.core import mail
from django.test import override_settings
from django.urls import reverse

from apps.accounts.models import User
from apps.accounts.services import invitation_link, invitation_send
from apps.core.errors import ApplicationError


@pytest.fixture
def imported(db) -> User:
    return User.objects.create_user(username="ivy", email="ivy@example.com", role="reviewer")


def test_an_invitation_link_opens_the_set_password_page_for_that_account(client, admin, imported):
    link = invitation_link(user=imported, actor=admin, base_url="http://testserver/")
    response = client.get(link, follow=True)
    assert response.status_code == 200
    assert "Choose your password" in response.content.decode()
    assert "For the account <strong>ivy</strong>" in response.content.decode()


def test_an_invitation_without_an_email_address_says_what_to_do(admin, db):
    nomail = User.objects.create_user(username="nomail", role="reviewer")
    with pytest.raises(ApplicationError) as caught:
        invitation_send(user=nomail, actor=admin, base_url="http://testserver/")
    assert "copy the link" in str(caught.value)
    assert mail.outbox == []


def test_only_admins_invite(reviewer, imported):
    with pytest.raises(ApplicationError, match="Only admins"):
        invitation_link(user=imported, actor=reviewer, base_url="http://testserver/")


def test_an_invitation_of_an_unknown_or_deactivated_account_is_a_404(client, admin, imported):
    client.force_login(admin)
    imported.is_active = False
    imported.save(update_fields=["is_active"])
    url = reverse("invitation_create", kwargs={"user_id": imported.pk})
    assert client.post(url, {"how": "link"}).status_code == 404
    assert client.post(reverse("invitation_create", kwargs={"user_id": 99999})).status_code == 404


def test_email_goes_to_the_console_by_default_and_to_smtp_when_a_host_is_set():
    import importlib
    import os

    import config.settings.base as base

    saved = {k: os.environ.pop(k, None) for k in ("EMAIL_HOST", "EMAIL_BACKEND")}
    try:
        assert importlib.reload(base).EMAIL_BACKEND.endswith("console.EmailBackend")
        os.environ["EMAIL_HOST"] = "smtp.example.org"
        reloaded = importlib.reload(base)
        assert reloaded.EMAIL_BACKEND.endswith("smtp.EmailBackend")
        assert (reloaded.EMAIL_HOST, reloaded.EMAIL_PORT, reloaded.EMAIL_USE_TLS) == (
            "smtp.example.org",
            587,
            True,
        )
    finally:
        os.environ.pop("EMAIL_HOST", None)
        for key, value in saved.items():
            if value is not None:
                os.environ[key] = value
        importlib.reload(base)


@override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend")
def test_the_admin_sees_who_has_no_password_yet(client, admin, imported, reviewer):
    client.force_login(admin)
    html = client.get(reverse("invitations")).content.decode()
    assert html.index("person-ivy") < html.index("person-rita")  # no password first
    assert "No password yet" in html
