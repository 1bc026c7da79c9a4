"""API tokens: they expire, and their owner can revoke them.

A token is DRF's authtoken row (one per user). It is valid for API_TOKEN_LIFETIME after it was
issued; POST /api/auth/token/ returns the current token, or a new one once the old has expired.
DELETE /api/auth/token/ revokes it at once (a leaked token stops working; the next POST issues a
fresh one). Expiry bounds how long a token copied into a notebook or a CI secret stays useful.
A token never outlives the password it was issued against: saving a new password (the reset
link, an invitation, the admin, `changepassword`) or deactivating the account deletes it
(`revoke_tokens_on_credentials_change`, connected in apps.py).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from apps.accounts.models import User


def api_token_expired(token: Token) -> bool:
    return token.created < timezone.now() - settings.API_TOKEN_LIFETIME


@transaction.atomic
def api_token_issue(*, user: User) -> Token:
    """The user's valid token: the existing one, or a new key when there is none or it expired."""
    token = Token.objects.select_for_update().filter(user=user).first()
    if token is not None and not api_token_expired(token):
        return token
    if token is not None:
        token.delete()
    return Token.objects.create(user=user)


def api_token_revoke(*, user: User) -> bool:
    """Delete the user's token; True when there was one."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return deleted > 0


def revoke_tokens_on_credentials_change(sender: type, instance: User, **kwargs: Any) -> None:
    """post_save of User: a new password or a deactivation revokes the API token.

    `AbstractBaseUser.set_password` keeps the raw password in `_password` until the save has
    finished (post_save runs inside it), so a set password is seen here whatever path set it.
    """
    if kwargs.get("created"):
        return
    if getattr(instance, "_password", None) is not None or not instance.is_active:
        Token.objects.filter(user=instance).delete()


class ExpiringTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <key>`, refused with 401 once the token is older than its lifetime."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        user, token = super().authenticate_credentials(key)
        if api_token_expired(token):
            raise exceptions.AuthenticationFailed(
                "Token has expired; POST /api/auth/token/ for a new one."
            )
        return user, token
