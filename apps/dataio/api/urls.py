from django.urls import re_path

from apps.dataio.api.imports import ImportCreateApi
from apps.dataio.services.imports import IMPORT_KINDS

urlpatterns = [
    re_path(
        r"^imports/(?P<kind>" + "|".join(IMPORT_KINDS) + r")/$",
        ImportCreateApi.as_view(),
        name="api-imports",
    ),
]
