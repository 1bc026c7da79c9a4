"""The API's sign-in: POST username + password for a token, DELETE to revoke it."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.response import Response
from rest_framework.settings import api_settings

from apps.accounts.tokens import api_token_issue, api_token_revoke
from apps.core.api import ErrorSerializer


class BoundedAuthTokenSerializer(AuthTokenSerializer):
    """DRF's sign-in body with lengths: a username longer than any account's is refused before
    authenticating (django-axes records each failure in a 255-character column: a longer one
    was a 500), and a password is at most 4,096 characters (hashing a megabyte costs)."""

    username = serializers.CharField(label="Username", write_only=True, max_length=150)
    password = serializers.CharField(
        label="Password",
        style={"input_type": "password"},
        trim_whitespace=False,
        write_only=True,
        max_length=4096,
    )


class AuthTokenCreateApi(ObtainAuthToken):
    """POST username + password for the user's API token; DELETE (signed in) revokes it.

    Tokens expire after API_TOKEN_LIFETIME (apps/accounts/tokens.py). Wrong passwords count toward
    the sign-in lockout shared with the login form (django-axes): once locked, 429.
    """

    serializer_class = BoundedAuthTokenSerializer
    # api_settings imports the dotted paths; the stubs type the setting as the strings.
    authentication_classes = api_settings.DEFAULT_AUTHENTICATION_CLASSES  # type: ignore[assignment]

    def get_permissions(self) -> list[BasePermission]:
        method = getattr(self.request, "method", None)
        return [IsAuthenticated()] if method == "DELETE" else [AllowAny()]

    def get_authenticators(self) -> list[Any]:
        # Signing in must not depend on a token that may have expired: POST reads no credentials.
        if getattr(self.request, "method", None) == "POST":
            return []
        return super().get_authenticators()

    @extend_schema(
        request=BoundedAuthTokenSerializer,
        responses={
            200: inline_serializer(
                "AuthToken",
                {
                    "token": serializers.CharField(),
                    "expires_at": serializers.DateTimeField(),
                },
            ),
            400: ErrorSerializer,
            429: ErrorSerializer,
        },
        tags=["auth"],
        auth=[],
    )
    def post(self, request: Any, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            if getattr(request, "axes_locked_out", False):
                # django-axes flagged DRF's request; its middleware reads the Django request.
                request._request.axes_locked_out = True
                request._request.axes_credentials = getattr(request, "axes_credentials", None)
            raise exceptions.ValidationError(serializer.errors)
        token = api_token_issue(user=serializer.validated_data["user"])
        return Response(
            {"token": token.key, "expires_at": token.created + settings.API_TOKEN_LIFETIME}
        )

    @extend_schema(
        request=None,
        responses={204: None, 401: ErrorSerializer},
        tags=["auth"],
        description="Revoke your API token now; the next POST issues a new one.",
    )
    def delete(self, request: Any, *args: Any, **kwargs: Any) -> Response:
        api_token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
