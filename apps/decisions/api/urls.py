from django.urls import path

from apps.decisions.api import marks, views

urlpatterns = [
    path("decisions/ranking/", views.DecisionRankingApi.as_view(), name="decisions-ranking"),
    path("decisions/marks/", marks.DecisionMarkListApi.as_view(), name="decisions-marks"),
    path(
        "decisions/marks/<int:idea_id>/",
        marks.DecisionMarkDetailApi.as_view(),
        name="decisions-mark",
    ),
    path(
        "decisions/marks/<int:idea_id>/history/",
        marks.DecisionMarkHistoryApi.as_view(),
        name="decisions-mark-history",
    ),
]
