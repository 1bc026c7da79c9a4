from django.urls import path

from apps.judges.api import views

urlpatterns = [
    path("judges/configs/", views.JudgeConfigListApi.as_view(), name="judges-api-configs"),
    path(
        "judges/configs/<int:config_id>/",
        views.JudgeConfigDetailApi.as_view(),
        name="judges-api-config",
    ),
    path("judges/runs/", views.JudgeRunListApi.as_view(), name="judges-api-runs"),
    path("judges/runs/<int:run_id>/", views.JudgeRunDetailApi.as_view(), name="judges-api-run"),
    path(
        "judges/runs/<int:run_id>/cancel/",
        views.JudgeRunCancelApi.as_view(),
        name="judges-api-run-cancel",
    ),
    path("judges/studies/", views.JudgeStudyStartApi.as_view(), name="judges-api-studies"),
    path(
        "judges/predictions/", views.JudgePredictionListApi.as_view(), name="judges-api-predictions"
    ),
    path("judges/alignment/", views.JudgeAlignmentApi.as_view(), name="judges-api-alignment"),
    path(
        "judges/me/alignment/", views.MyJudgeAlignmentApi.as_view(), name="judges-api-my-alignment"
    ),
]
