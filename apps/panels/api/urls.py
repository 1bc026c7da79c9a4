from django.urls import path

from apps.panels.api import views

urlpatterns = [
    path("panels/runs/<int:run_id>/", views.PanelRunDetailApi.as_view(), name="panels-api-run"),
]
