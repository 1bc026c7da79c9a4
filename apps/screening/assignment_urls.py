from django.urls import path

from apps.screening import assignment_views as views

app_name = "assignments"
urlpatterns = [
    path("", views.index, name="index"),
    path("assign/", views.assign, name="assign"),
    path("bulk/", views.bulk, name="bulk"),
    path("<int:pk>/delete/", views.delete, name="delete"),
]
