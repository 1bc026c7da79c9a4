"""Sign-in hardening: a lockout after repeated wrong passwords on the login form and on the token
endpoint (django-axes), Django's four password validators, and API tokens that expire and can be
revoked."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from apps.demo.services import DEMO_PASSWORD
from tests.factories import PASSWORD, UserFactory

LOGIN = "/accounts/login/"
TOKEN = "/api/auth/token/"
LIMIT = settings.AXES_FAILURE_LIMIT


def _form_login(client, password: str, ip: str = "10.0.0.1"):
    return client.post(LOGIN, {"username": "rita", "password": password}, REMOTE_ADDR=ip)


def _token(client, password: str, ip: str = "10.0.0.1"):
    return client.post(
        TOKEN, {"username": "rita", "password": password}, format="json", REMOTE_ADDR=ip
    )


def test_it_locks_the_login_form_after_the_failure_limit(client, reviewer):
    codes = [_form_login(client, "wrong").status_code for _ in range(LIMIT)]
    assert codes == [200] * (LIMIT - 1) + [429]
    locked = _form_login(client, PASSWORD)
    assert locked.status_code == 429
    assert "Too many failed sign-ins" in locked.content.decode()
    assert int(locked["Retry-After"]) == settings.AXES_COOLOFF_TIME.total_seconds()
    # Another address is not locked: a stranger cannot lock a reviewer out.
    assert _form_login(client, PASSWORD, ip="10.0.0.2").status_code == 302


def test_it_locks_the_token_endpoint_with_a_json_429(reviewer):
    api = APIClient()
    codes = [_token(api, "wrong").status_code for _ in range(LIMIT)]
    assert codes == [400] * (LIMIT - 1) + [429]
    locked = _token(api, PASSWORD)
    assert locked.status_code == 429
    assert set(locked.json()) == {"detail", "errors"}
    assert "Too many failed sign-ins" in locked.json()["detail"]


def test_it_counts_failures_on_the_form_and_the_api_together(client, reviewer):
    for _ in range(LIMIT - 1):
        _form_login(client, "wrong")
    assert _token(APIClient(), "wrong").status_code == 429


def test_it_forgets_earlier_failures_after_a_correct_password(client, reviewer):
    for _ in range(LIMIT - 1):
        _form_login(client, "wrong")
    assert _form_login(client, PASSWORD).status_code == 302
    client.logout()
    codes = [_form_login(client, "wrong").status_code for _ in range(LIMIT - 1)]
    assert 429 not in codes


@pytest.mark.parametrize(
    "weak,why",
    [
        ("password", "too common"),
        ("12345678", "entirely numeric"),
        ("rita1", "too short"),
        ("ritaforster1", "too similar"),
    ],
)
def test_it_refuses_weak_passwords_when_one_is_chosen(db, weak, why):
    user = UserFactory(username="ritaforster")
    form = SetPasswordForm(user, data={"new_password1": weak, "new_password2": weak})
    assert not form.is_valid()
    assert why in " ".join(form.errors["new_password2"])


def test_it_accepts_the_demo_and_test_passwords(reviewer):
    validate_password(DEMO_PASSWORD, user=reviewer)
    validate_password(PASSWORD, user=reviewer)
    with pytest.raises(ValidationError):
        validate_password("password", user=reviewer)


def test_it_refuses_an_expired_token_with_401_and_issues_a_new_one(reviewer):
    first = _token(APIClient(), PASSWORD).json()
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {first['token']}")
    assert api.get("/api/my/assignments/").status_code == 200
    Token.objects.filter(key=first["token"]).update(
        created=Token.objects.get(key=first["token"]).created
        - settings.API_TOKEN_LIFETIME
        - timedelta(seconds=1)
    )
    expired = api.get("/api/my/assignments/")
    assert expired.status_code == 401
    assert "expired" in expired.json()["detail"]
    # Asking again works even with the expired token still in the header, and rotates the key.
    second = api.post(TOKEN, {"username": "rita", "password": PASSWORD}, format="json").json()
    assert second["token"] != first["token"]
    api.credentials(HTTP_AUTHORIZATION=f"Token {second['token']}")
    assert api.get("/api/my/assignments/").status_code == 200


def test_it_tells_when_a_token_expires(reviewer):
    body = _token(APIClient(), PASSWORD).json()
    token = Token.objects.get(key=body["token"])
    assert body["expires_at"].startswith(
        (token.created + settings.API_TOKEN_LIFETIME).isoformat()[:19]
    )


def test_it_lets_a_user_revoke_their_token(reviewer):
    key = _token(APIClient(), PASSWORD).json()["token"]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.delete(TOKEN).status_code == 204
    assert api.get("/api/my/assignments/").status_code == 401
    assert not Token.objects.filter(key=key).exists()
