"""Writes for accounts: invitations to choose a password, and throttled password resets.

An invitation is a Django password-reset link (token from `default_token_generator`, page
`PasswordResetConfirmView`); it works for imported accounts that have no usable password yet and
stops working once a password is set or after PASSWORD_RESET_TIMEOUT.
"""

from __future__ import annotations

import hashlib

from celery import current_app
from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.core.cache import cache
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from apps.accounts.forms import AccountPasswordResetForm
from apps.accounts.models import Invitation, User
from apps.core.errors import ApplicationError, FieldError

# The task that mails a reset link (apps/accounts/tasks.py), sent by name.
PASSWORD_RESET_SEND = "accounts.password_reset_send"


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


class ResetThrottled(ApplicationError):
    """Too many reset requests from one client address (answered 429)."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _count(key: str, *, window: int) -> int:
    """Requests counted under `key` in the current window (this one included)."""
    cache.add(key, 0, timeout=window)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr: a new window
        cache.set(key, 1, timeout=window)
        return 1


def password_reset_request(*, email: str, client_ip: str, domain: str, use_https: bool) -> None:
    """Someone asked for a reset link: throttle, then send the mail from a task after commit.

    The answer must not tell whether the address has an account: the request does the same work
    for every address (two cache counters, one queued message) and the task, not the request,
    looks the account up and talks to the SMTP server. Limits per PASSWORD_RESET_WINDOW_SECONDS:
    PASSWORD_RESET_PER_IP requests from one client address (beyond it: 429, which says nothing
    about accounts), PASSWORD_RESET_PER_ADDRESS mails to one address (beyond it the request is
    answered as usual and nothing is sent, so nobody can flood a mailbox).
    """
    window = settings.PASSWORD_RESET_WINDOW_SECONDS
    prefix = settings.PASSWORD_RESET_THROTTLE_PREFIX
    if _count(f"{prefix}:ip:{client_ip}", window=window) > settings.PASSWORD_RESET_PER_IP:
        raise ResetThrottled(
            f"Too many reset requests from your address. Try again in {window // 60} minutes.",
            retry_after=window,
        )
    address = hashlib.sha256(email.strip().lower().encode()).hexdigest()
    if _count(f"{prefix}:address:{address}", window=window) > settings.PASSWORD_RESET_PER_ADDRESS:
        return
    # Sent by name (the task module imports this one): after commit, like delay_on_commit.
    transaction.on_commit(
        lambda: current_app.send_task(PASSWORD_RESET_SEND, args=[email, domain, use_https])
    )


def password_reset_send(*, email: str, domain: str, use_https: bool) -> int:
    """Mail a reset link to the active accounts with this address (Django's reset form and
    templates); called by the task. Returns the number of accounts it wrote to."""
    form = AccountPasswordResetForm(data={"email": email})
    if not form.is_valid():
        return 0
    link_days = {"link_days": max(1, settings.PASSWORD_RESET_TIMEOUT // 86400)}
    form.save(domain_override=domain, use_https=use_https, extra_email_context=link_days)
    return len(list(form.get_users(form.cleaned_data["email"])))
