"""Runs the password-reset mails the web process queued, in this process, so the test's
`mail.outbox` receives them (the task is what a worker would run)."""

from __future__ import annotations

from apps.accounts.tasks import password_reset_send_task
from tests.judges import broker


def deliver_queued_reset_mails() -> int:
    """Run and remove every queued `accounts.password_reset_send`; how many ran."""
    queued = broker.sent("accounts.password_reset_send")
    broker.purge()
    for message in queued:
        password_reset_send_task.run(*message.args, **message.kwargs)
    return len(queued)
