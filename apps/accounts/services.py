"""Writes for accounts: invitations to choose a password.

An invitation is a Django password-reset link (token from `default_token_generator`, page
`PasswordResetConfirmView`); it works for imported accounts that have no usable password yet and
stops working once a password is set or after PASSWORD_RESET_TIMEOUT.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from apps.accounts.models import Invitation, User
from apps.core.errors import ApplicationError, FieldError


def _set_password_url(*, user: User, base_url: str) -> str:
    path = reverse(
        "password_reset_confirm",
        kwargs={
            "uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
            "token": default_token_generator.make_token(user),
        },
    )
    return base_url.rstrip("/") + path


def _check_can_invite(*, user: User, actor: User) -> None:
    if not actor.is_admin:
        raise ApplicationError("Only admins invite people.")
    if not user.is_active:
        raise ApplicationError(
            "Nobody was invited.",
            errors=[FieldError(field="user", message="is deactivated", value=user.username)],
        )


def invitation_link(*, user: User, actor: User, base_url: str) -> str:
    """A link the admin passes on by hand (chat, their own mail); recorded as an invitation."""
    _check_can_invite(user=user, actor=actor)
    Invitation.objects.create(user=user, sent_by=actor, channel=Invitation.Channel.LINK)
    return _set_password_url(user=user, base_url=base_url)


def invitation_send(*, user: User, actor: User, base_url: str) -> str:
    """E-mail the user a link to choose their password (EMAIL_BACKEND decides how it leaves)."""
    _check_can_invite(user=user, actor=actor)
    if not user.email:
        raise ApplicationError(
            "Nothing was sent.",
            errors=[
                FieldError(
                    field="email",
                    message="is empty: add an address in the Django admin, or copy the link "
                    "and pass it on yourself",
                    value=user.username,
                )
            ],
        )
    url = _set_password_url(user=user, base_url=base_url)
    context = {
        "user": user,
        "url": url,
        "inviter": actor,
        "base_url": base_url.rstrip("/"),
        "link_days": max(1, settings.PASSWORD_RESET_TIMEOUT // 86400),
    }
    subject = render_to_string("registration/invitation_subject.txt", context).strip()
    body = render_to_string("registration/invitation_email.txt", context)
    send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [user.email])
    Invitation.objects.create(user=user, sent_by=actor, channel=Invitation.Channel.EMAIL)
    return url
