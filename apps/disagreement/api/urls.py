from django.urls import path

from apps.disagreement.api import views

urlpatterns = [
    path("metrics/", views.MetricsApi.as_view(), name="metrics"),
    path("metrics/recompute/", views.MetricsRecomputeApi.as_view(), name="metrics-recompute"),
    path(
        "metrics/recompute/<int:snapshot_id>/",
        views.MetricsRecomputeStatusApi.as_view(),
        name="metrics-recompute-status",
    ),
]
