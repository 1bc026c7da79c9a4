from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from apps.accounts.views import home

urlpatterns = [
    path("admin/", admin.site.urls),
    # Each role's start page (accounts knows the roles; core, below it, does not).
    path("", home, name="home"),
    path("", include("apps.core.urls")),
    path("accounts/", include("apps.accounts.urls")),
    path("catalog/", include("apps.catalog.urls")),
    path("screening/assignments/", include("apps.screening.assignment_urls")),
    path("screening/", include("apps.screening.urls")),
    path("disagreement/", include("apps.disagreement.urls")),
    path("judges/", include("apps.judges.urls")),
    path("findings/", include("apps.findings.urls")),
    path("decisions/", include("apps.decisions.urls")),
    path("panels/", include("apps.panels.urls")),
    path("api/", include("apps.catalog.api.urls")),
    path("api/", include("apps.catalog.api.import_urls")),
    path("api/", include("apps.screening.api.urls")),
    path("api/", include("apps.disagreement.api.urls")),
    path("api/", include("apps.judges.api.urls")),
    path("api/", include("apps.findings.api.urls")),
    path("api/", include("apps.decisions.api.urls")),
    path("api/", include("apps.panels.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file (no inline script: CSP).
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
]

# Unknown /api/... routes answer with the API's JSON error body, not the HTML 404 page.
handler404 = "apps.core.views.not_found"
handler500 = "apps.core.views.server_error"
