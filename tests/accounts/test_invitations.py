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


def _email_settings(**env: str) -> list[str]:
    """EMAIL_* settings as a fresh process reads them from this environment."""
    import os
    import subprocess
    import sys

    clean = {k: v for k, v in os.environ.items() if not k.startswith("EMAIL_")}
    code = (
        "import config.settings.base as s; "
        "print(s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT, s.EMAIL_USE_TLS, s.EMAIL_USE_SSL)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def test_email_goes_to_the_console_by_default_and_to_smtp_when_a_host_is_set():
    assert _email_settings()[0] == "django.core.mail.backends.console.EmailBackend"
    assert _email_settings(EMAIL_HOST="smtp.example.org") == [
        "django.core.mail.backends.smtp.EmailBackend",
        "smtp.example.org",
        "587",
        "True",
        "False",
    ]
    assert _email_settings(EMAIL_HOST="smtp.example.org", EMAIL_USE_SSL="true", EMAIL_PORT="465")[
        2:
    ] == ["465", "False", "True"]


@override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend")
def test_the_admin_sees_who_has_no_password_yet(client, admin, imported, reviewer):
    client.force_login(admin)
    html = client.get(reverse("invitations")).content.decode()
    assert html.index("person-ivy") < html.index("person-rita")  # no password first
    assert "No password yet" in html
