from django.urls import path

from apps.screening import views

app_name = "screening"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("ideas/<int:idea_id>/", views.idea_rate, name="rate"),
    path("ideas/<int:idea_id>/decline/", views.idea_decline, name="decline"),
    path("ideas/<int:idea_id>/decline/undo/", views.idea_decline_undo, name="decline_undo"),
    path("ratings/", views.ratings, name="ratings"),
    path("ratings.csv", views.ratings, {"as_csv": True}, name="ratings_csv"),
]
