from django.urls import path

from apps.decisions.api import views

urlpatterns = [
    path("decisions/ranking/", views.DecisionRankingApi.as_view(), name="decisions-ranking"),
]
