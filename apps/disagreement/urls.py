from django.urls import path

from apps.disagreement import views

app_name = "disagreement"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("strictness/", views.strictness, name="strictness"),
    path("agreement/", views.agreement, name="agreement"),
    path("panel/", views.panel, name="panel"),
    path("contested/", views.contested, name="contested"),
    path("split/", views.split, name="split"),
    path("decide/", views.decide, name="decide"),
    path("ideas/<int:idea_id>/", views.idea_detail, name="idea"),
    path("export/<slug:kind>.csv", views.export_csv, name="export"),
    path("recompute/", views.recompute, name="recompute"),
    path(
        "snapshots/<int:snapshot_id>/progress/", views.snapshot_progress, name="snapshot_progress"
    ),
]
