from celery import shared_task


@shared_task(name="accounts.password_reset_send")
def password_reset_send_task(email: str, domain: str, use_https: bool) -> int:
    """Thin: mail the reset link outside the request, so its timing tells nothing."""
    from apps.accounts.services import password_reset_send

    return password_reset_send(email=email, domain=domain, use_https=use_https)
