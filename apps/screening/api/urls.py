from django.urls import path

from apps.screening.api import views

urlpatterns = [
    path("rubrics/", views.RubricListApi.as_view(), name="api-rubric-list"),
    path("rubrics/<int:pk>/", views.RubricDetailApi.as_view(), name="api-rubric-detail"),
    path("ratings/", views.RatingListApi.as_view(), name="api-rating-list"),
    path("ratings/<int:pk>/", views.RatingDetailApi.as_view(), name="api-rating-detail"),
    path("ratings/<int:pk>/history/", views.RatingHistoryApi.as_view(), name="api-rating-history"),
    path("ideas/<int:pk>/my-rating/", views.MyRatingApi.as_view(), name="api-my-rating"),
    path("ideas/<int:pk>/decline/", views.IdeaDeclineApi.as_view(), name="api-idea-decline"),
    path("assignments/", views.AssignmentListApi.as_view(), name="api-assignment-list"),
    path(
        "assignments/bulk-balanced/",
        views.AssignmentBulkBalancedApi.as_view(),
        name="api-assignment-bulk-balanced",
    ),
    path("assignments/load/", views.ReviewerLoadApi.as_view(), name="api-assignment-load"),
    path(
        "assignments/<int:pk>/", views.AssignmentDetailApi.as_view(), name="api-assignment-detail"
    ),
    path("my/assignments/", views.MyAssignmentListApi.as_view(), name="api-my-assignments"),
]
