from django.urls import path

from apps.judges.api.views import alignment, configs, predictions, runs

urlpatterns = [
    path("judges/configs/", configs.JudgeConfigListApi.as_view(), name="judges-api-configs"),
    path(
        "judges/configs/<int:config_id>/",
        configs.JudgeConfigDetailApi.as_view(),
        name="judges-api-config",
    ),
    path("judges/runs/", runs.JudgeRunListApi.as_view(), name="judges-api-runs"),
    path("judges/runs/<int:run_id>/", runs.JudgeRunDetailApi.as_view(), name="judges-api-run"),
    path(
        "judges/runs/<int:run_id>/cancel/",
        runs.JudgeRunCancelApi.as_view(),
        name="judges-api-run-cancel",
    ),
    path("judges/studies/", runs.JudgeStudyStartApi.as_view(), name="judges-api-studies"),
    path(
        "judges/predictions/",
        predictions.JudgePredictionListApi.as_view(),
        name="judges-api-predictions",
    ),
    path("judges/alignment/", alignment.JudgeAlignmentApi.as_view(), name="judges-api-alignment"),
    path(
        "judges/me/alignment/",
        alignment.MyJudgeAlignmentApi.as_view(),
        name="judges-api-my-alignment",
    ),
]
