from django.apps import AppConfig


class DisagreementConfig(AppConfig):
    name = "apps.disagreement"
    label = "disagreement"
