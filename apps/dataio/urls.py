from django.urls import path

from apps.dataio import views

# The pages keep the /catalog/ paths and URL names they had before the importers moved here.
app_name = "catalog"
urlpatterns = [
    path("admin/", views.admin_home, name="admin_home"),
    path("admin/import/<slug:kind>/", views.import_upload, name="import_upload"),
    path("formats/<slug:kind>/", views.format_help, name="format_help"),
    path("examples/<str:name>", views.example_file, name="example_file"),
    path("admin/archive/", views.archive_home, name="archive_home"),
    path("admin/archive/export/", views.archive_export, name="archive_export"),
    path("admin/archive/import/", views.archive_import, name="archive_import"),
]
