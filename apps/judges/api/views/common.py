"""What the judges API views share: the error response and the query parameter of the schema."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
)
from rest_framework import status
from rest_framework.response import Response

from apps.core.errors import ApplicationError, NotFound


def _error(exc: ApplicationError) -> Response:
    code = status.HTTP_404_NOT_FOUND if isinstance(exc, NotFound) else status.HTTP_400_BAD_REQUEST
    return Response(exc.as_dict(), status=code)


def _query(name: str, description: str, **kwargs: Any) -> OpenApiParameter:
    return OpenApiParameter(
        name,
        OpenApiTypes.STR,
        OpenApiParameter.QUERY,
        required=False,
        description=description,
        **kwargs,
    )
