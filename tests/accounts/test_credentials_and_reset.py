"""API tokens do not outlive the password (reset, change, deactivation), and the password reset
is throttled, answers alike for every address, and mails from a task after the answer."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.core import mail
from django.test import TestCase
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.accounts.reset_mail import deliver_queued_reset_mails
from tests.factories import PASSWORD, UserFactory
from tests.judges import broker

RESET = "/accounts/password-reset/"
NEW_PASSWORD = "copper-window-77"


def _reset(client, email: str, **extra):
    """POST the reset form; the queued mail is sent at commit, as outside a test transaction."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        return client.post(RESET, {"email": email}, **extra)


@pytest.fixture(autouse=True)
def _empty_queue():
    broker.purge()
    yield
    broker.purge()


def _api_with_token(user) -> tuple[APIClient, str]:
    key = (
        APIClient()
        .post("/api/auth/token/", {"username": user.username, "password": PASSWORD}, format="json")
        .json()["token"]
    )
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/my/assignments/").status_code == 200
    return api, key


def test_a_password_reset_revokes_the_api_token(client, reviewer):
    reviewer.email = "rita@example.com"
    reviewer.save()
    api, key = _api_with_token(reviewer)

    assert _reset(client, "rita@example.com").status_code == 302
    assert deliver_queued_reset_mails() == 1
    link = re.search(r"https?://[^/]+(/accounts/reset/\S+/)", mail.outbox[0].body).group(1)
    form_url = client.get(link)["Location"]
    done = client.post(form_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302 and done["Location"].endswith("/accounts/reset/done/")

    assert api.get("/api/my/assignments/").status_code == 401
    assert not Token.objects.filter(key=key).exists()


def test_a_password_changed_in_the_admin_revokes_the_api_token(client, admin, reviewer):
    api, _ = _api_with_token(reviewer)
    admin.is_staff = admin.is_superuser = True  # as the demo's admin (Django admin access)
    admin.save()
    client.force_login(admin)
    response = client.post(
        f"/admin/accounts/user/{reviewer.id}/password/",
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"},
    )
    assert response.status_code == 302
    assert response["Location"].endswith(f"/admin/accounts/user/{reviewer.id}/change/")
    assert api.get("/api/my/assignments/").status_code == 401


def test_a_password_set_in_code_or_a_command_revokes_the_api_token(reviewer):
    api, _ = _api_with_token(reviewer)
    reviewer.set_password(NEW_PASSWORD)
    reviewer.save()
    assert api.get("/api/my/assignments/").status_code == 401


def test_deactivating_an_account_revokes_its_api_token(reviewer):
    _, key = _api_with_token(reviewer)
    reviewer.is_active = False
    reviewer.save()
    assert not Token.objects.filter(key=key).exists()


def test_other_changes_to_an_account_keep_its_api_token(reviewer):
    api, _ = _api_with_token(reviewer)
    reviewer.first_name = "Margarita"
    reviewer.save()
    assert api.get("/api/my/assignments/").status_code == 200


def test_a_reset_answers_alike_for_known_and_unknown_addresses_and_mails_after_the_answer(
    client, db
):
    UserFactory(username="ivy", email="ivy@example.com")
    known = _reset(client, "ivy@example.com")
    unknown = _reset(client, "nobody@example.com")
    assert (known.status_code, known["Location"]) == (unknown.status_code, unknown["Location"])
    assert known.content == unknown.content
    # Nothing was mailed inside the request: one queued message each, whatever the address.
    assert mail.outbox == []
    assert [m.args[0] for m in broker.sent("accounts.password_reset_send")] == [
        "ivy@example.com",
        "nobody@example.com",
    ]
    assert deliver_queued_reset_mails() == 2
    assert [m.to for m in mail.outbox] == [["ivy@example.com"]]


def test_a_reset_mails_one_address_at_most_the_limit_per_window(client, db):
    UserFactory(username="ivy", email="ivy@example.com")
    codes = [
        _reset(client, "ivy@example.com").status_code
        for _ in range(settings.PASSWORD_RESET_PER_ADDRESS + 3)
    ]
    assert codes == [302] * (settings.PASSWORD_RESET_PER_ADDRESS + 3), "answered alike"
    assert deliver_queued_reset_mails() == settings.PASSWORD_RESET_PER_ADDRESS
    assert len(mail.outbox) == settings.PASSWORD_RESET_PER_ADDRESS


def test_a_reset_refuses_one_client_address_past_its_limit_with_429(client, db, settings):
    settings.PASSWORD_RESET_PER_IP = 4
    codes = [
        _reset(client, f"x{i}@example.com", REMOTE_ADDR="10.0.0.9").status_code for i in range(5)
    ]
    assert codes == [302, 302, 302, 302, 429]
    refused = _reset(client, "y@example.com", REMOTE_ADDR="10.0.0.9")
    assert refused.status_code == 429
    assert "Too many reset requests from your address" in refused.content.decode()
    assert int(refused["Retry-After"]) == settings.PASSWORD_RESET_WINDOW_SECONDS
    assert len(broker.sent("accounts.password_reset_send")) == 4
    # Another client address is not affected.
    other = _reset(client, "y@example.com", REMOTE_ADDR="10.0.0.10")
    assert other.status_code == 302
