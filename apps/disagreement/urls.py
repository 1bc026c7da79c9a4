from django.urls import path
from django.views.generic import RedirectView

from apps.disagreement import views

app_name = "disagreement"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("strictness/", views.strictness, name="strictness"),
    path("agreement/", views.agreement, name="agreement"),
    path("panel/", views.panel, name="panel"),
    path("contested/", views.contested, name="contested"),
    path("split/", views.split, name="split"),
    # Decide moved to the decisions app; the old addresses (bookmarks, docs) redirect there.
    path(
        "decide/",
        RedirectView.as_view(pattern_name="decisions:decide", query_string=True),
        name="decide",
    ),
    path("ideas/<int:idea_id>/", views.idea_detail, name="idea"),
    path(
        "export/decide.csv",
        RedirectView.as_view(pattern_name="decisions:export", query_string=True),
        name="export_decide",
    ),
    path("export/<slug:kind>.csv", views.export_csv, name="export"),
    path("recompute/", views.recompute, name="recompute"),
    path(
        "snapshots/<int:snapshot_id>/progress/", views.snapshot_progress, name="snapshot_progress"
    ),
]
