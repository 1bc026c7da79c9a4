from django.urls import path

from apps.judges import views

app_name = "judges"
urlpatterns = [
    path("", views.alignment, name="alignment"),
    path("export/<slug:table>.csv", views.alignment_csv, name="alignment_csv"),
    path("_status/", views.alignment_status, name="alignment_status"),
    path("recompute/", views.alignment_recompute, name="alignment_recompute"),
    path("runs/", views.runs, name="runs"),
    path("runs/_table/", views.runs_table, name="runs_table"),
    path("runs/<int:run_id>/", views.run_detail, name="run_detail"),
    path("runs/<int:run_id>/_status/", views.run_status, name="run_status"),
    path("runs/<int:run_id>/cancel/", views.run_cancel, name="run_cancel"),
    path("cases/<int:idea_id>/", views.case, name="case"),
    path("predictions/", views.predictions, name="predictions"),
    path("me/", views.me, name="me"),
]
