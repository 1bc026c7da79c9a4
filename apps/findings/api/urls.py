from django.urls import path

from apps.findings.api import views

urlpatterns = [
    path("findings/", views.FindingsApi.as_view(), name="findings"),
    path("findings/recompute/", views.FindingsRecomputeApi.as_view(), name="findings-recompute"),
    path("ideas/<int:idea_id>/findings/", views.IdeaFindingsApi.as_view(), name="idea-findings"),
]
