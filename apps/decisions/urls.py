from django.urls import path

from apps.decisions import views

app_name = "decisions"
urlpatterns = [
    path("decide/", views.decide, name="decide"),
    path("decide.csv", views.export_csv, name="export"),
    path("recompute/", views.recompute, name="recompute"),
    path(
        "snapshots/<int:snapshot_id>/progress/", views.snapshot_progress, name="snapshot_progress"
    ),
    path("routing/", views.routing, name="routing"),
    path("routing/accept/", views.routing_accept, name="routing_accept"),
    path("routing/domain/", views.routing_domain, name="routing_domain"),
]
