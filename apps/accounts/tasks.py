"""Thin Celery tasks. The services send them by name, so this module imports the services and
never the other way round."""

from celery import shared_task

from apps.accounts import services


@shared_task(name=services.PASSWORD_RESET_SEND)
def password_reset_send_task(email: str, domain: str, use_https: bool) -> int:
    """Thin: mail the reset link outside the request, so its timing tells nothing."""
    return services.password_reset_send(email=email, domain=domain, use_https=use_https)
