from django.urls import path, re_path

from apps.catalog.api.import_jobs import ImportJobDetailApi, ImportJobListApi
from apps.catalog.api.imports import ImportCreateApi
from apps.catalog.services.imports import IMPORT_KINDS

urlpatterns = [
    re_path(
        r"^imports/(?P<kind>" + "|".join(IMPORT_KINDS) + r")/$",
        ImportCreateApi.as_view(),
        name="api-imports",
    ),
    path("imports/jobs/", ImportJobListApi.as_view(), name="api-import-job-list"),
    path("imports/jobs/<int:pk>/", ImportJobDetailApi.as_view(), name="api-import-job-detail"),
]
