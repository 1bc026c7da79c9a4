from django.urls import path

from apps.accounts.api import AuthTokenCreateApi
from apps.catalog.api import views

urlpatterns = [
    # config/urls.py has no API include of its own for accounts/core; the token endpoint lives
    # here because this is the first API module mounted under /api/.
    path("auth/token/", AuthTokenCreateApi.as_view(), name="api-auth-token"),
    path("domains/", views.DomainListApi.as_view(), name="api-domain-list"),
    path("domains/<int:pk>/", views.DomainDetailApi.as_view(), name="api-domain-detail"),
    path("patents/", views.PatentListApi.as_view(), name="api-patent-list"),
    path("patents/<int:pk>/", views.PatentDetailApi.as_view(), name="api-patent-detail"),
    path("ideas/", views.IdeaListApi.as_view(), name="api-idea-list"),
    path("ideas/<int:pk>/", views.IdeaDetailApi.as_view(), name="api-idea-detail"),
]
