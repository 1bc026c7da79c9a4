from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.contrib.auth.forms import PasswordResetForm

from apps.accounts.models import User


class AccountPasswordResetForm(PasswordResetForm):
    """Django's reset form, also for accounts that never had a password.

    Django skips users with an unusable password; here those are reviewers imported from a file,
    and a reset link is exactly how they get their first password.
    """

    def get_users(self, email: str) -> Iterator[Any]:
        email_field = User.get_email_field_name()
        return iter(
            User._default_manager.filter(**{f"{email_field}__iexact": email, "is_active": True})
        )
