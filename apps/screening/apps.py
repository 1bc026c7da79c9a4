from django.apps import AppConfig


class ScreeningConfig(AppConfig):
    name = "apps.screening"
    label = "screening"
