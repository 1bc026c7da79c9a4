from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        # Registers the system check of the change hooks (apps/core/hooks.py).
        from apps.core import hooks  # noqa: F401
