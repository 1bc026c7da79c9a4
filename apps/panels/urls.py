from django.urls import path

from apps.panels import views

app_name = "panels"
urlpatterns = [
    path("", views.home, name="home"),
    path("documents/", views.document_upload, name="document_upload"),
    path("personas/build/", views.personas_build, name="personas_build"),
    path("runs/", views.run_start, name="run_start"),
    path("runs/<int:run_id>/", views.run_detail, name="run_detail"),
    path("runs/<int:run_id>/_status/", views.run_status, name="run_status"),
]
