from django.conf import settings
from django.contrib.auth import views as auth_views
from django.urls import path

from apps.accounts import views

# How long an e-mailed link stays valid, in whole days, for the pages and e-mails that say so.
LINK_DAYS = {"link_days": max(1, settings.PASSWORD_RESET_TIMEOUT // 86400)}

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Password reset with Django's own views; invitations use the same confirm page.
    path(
        "password-reset/",
        views.ThrottledPasswordResetView.as_view(extra_context=LINK_DAYS),
        name="password_reset",
    ),
    path(
        "password-reset/sent/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("invitations/", views.invitations, name="invitations"),
    path("invitations/<int:user_id>/", views.invitation_create, name="invitation_create"),
]
