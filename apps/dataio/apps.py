from django.apps import AppConfig


class DataioConfig(AppConfig):
    name = "apps.dataio"
    label = "dataio"
