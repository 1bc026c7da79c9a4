from django.apps import AppConfig


class PanelsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "apps.panels"
    verbose_name = "Persona panels"
