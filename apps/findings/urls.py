from django.urls import path

from apps.findings import views

app_name = "findings"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("export/<slug:kind>.csv", views.export_csv, name="export"),
    path("recompute/", views.recompute, name="recompute"),
]
