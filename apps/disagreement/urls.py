from django.urls import path
from django.views.generic import RedirectView

from apps.accounts.permissions import role_required
from apps.disagreement import views

# Decide moved to the decisions app; its old addresses (bookmarks, docs) redirect there, for the
# same roles as the page itself.
_managers = role_required("manager", "admin")

app_name = "disagreement"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("strictness/", views.strictness, name="strictness"),
    path("agreement/", views.agreement, name="agreement"),
    path("panel/", views.panel, name="panel"),
    path("contested/", views.contested, name="contested"),
    path("split/", views.split, name="split"),
    path(
        "decide/",
        _managers(RedirectView.as_view(pattern_name="decisions:decide", query_string=True)),
        name="decide",
    ),
    path("ideas/<int:idea_id>/", views.idea_detail, name="idea"),
    path(
        "export/decide.csv",
        _managers(RedirectView.as_view(pattern_name="decisions:export", query_string=True)),
        name="export_decide",
    ),
    path("export/<slug:kind>.csv", views.export_csv, name="export"),
    path("recompute/", views.recompute, name="recompute"),
    path(
        "snapshots/<int:snapshot_id>/progress/", views.snapshot_progress, name="snapshot_progress"
    ),
]
