from django.urls import path

from apps.catalog import import_job_views, views

app_name = "catalog"
urlpatterns = [
    path("admin/", views.admin_home, name="admin_home"),
    path("admin/import/<slug:kind>/", views.import_upload, name="import_upload"),
    path("admin/import/jobs/<int:job_id>/", import_job_views.import_job, name="import_job"),
    path(
        "admin/import/jobs/<int:job_id>/status/",
        import_job_views.import_job_status,
        name="import_job_status",
    ),
    path(
        "admin/import/jobs/<int:job_id>/problems.csv",
        import_job_views.import_job_errors,
        name="import_job_errors",
    ),
    path("formats/<slug:kind>/", views.format_help, name="format_help"),
    path("examples/<str:name>", views.example_file, name="example_file"),
    path("admin/archive/", views.archive_home, name="archive_home"),
    path("admin/archive/export/", views.archive_export, name="archive_export"),
    path("admin/archive/import/", views.archive_import, name="archive_import"),
]
