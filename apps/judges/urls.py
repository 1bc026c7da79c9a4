from django.urls import path  # noqa: F401

app_name = "judges"
urlpatterns: list = []
