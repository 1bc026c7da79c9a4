from django.urls import path  # noqa: F401

app_name = "disagreement"
urlpatterns: list = []
