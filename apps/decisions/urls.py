from django.urls import path

from apps.decisions import views
from apps.decisions.record import views as record

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
    # The decision record (apps/decisions/record): marks, their history, CSV, memo, N.
    path("marks/", record.marks_page, name="marks"),
    path("marks.csv", record.marks_csv, name="marks_csv"),
    path("marks/<int:idea_id>/", record.mark_set, name="mark_set"),
    path("marks/<int:idea_id>/history/", record.mark_history, name="mark_history"),
    path("memo/", record.memo, name="memo"),
    path("shortlist/", record.shortlist_size, name="shortlist_size"),
]
