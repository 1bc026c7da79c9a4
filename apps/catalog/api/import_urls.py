from django.urls import re_path

from apps.catalog.api.imports import ImportCreateApi
from apps.catalog.services.imports import IMPORT_KINDS

urlpatterns = [
    re_path(
        r"^imports/(?P<kind>" + "|".join(IMPORT_KINDS) + r")/$",
        ImportCreateApi.as_view(),
        name="api-imports",
    ),
]
