"""DRF glue shared by every app: one exception handler and one error body.

Every API error has the same shape, whatever raised it:
    {"detail": "The rating was not saved.",
     "errors": [{"field": "market_size", "message": "...", "row": null, "value": "2"}]}
Services raise apps.core.errors.ApplicationError; this handler maps it to 400 (PermissionDenied
-> 403, NotFound -> 404, ServiceUnavailable -> 503). DRF's own errors (validation,
authentication, 404) get the same body, and so does an unreachable database or broker: 503 with
Retry-After, the dependency named in `errors` (apps/core/health.py decides what is an outage).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from apps.core.errors import (
    ApplicationError,
    FieldError,
    NotFound,
    PermissionDenied,
    ServiceUnavailable,
)
from apps.core.health import RETRY_AFTER_SECONDS, outage_of, unavailable_message
from apps.core.pagination import BIGINT_MAX, MAX_PAGE_SIZE, Pagination


class FieldErrorSerializer(serializers.Serializer):
    field = serializers.CharField()
    message = serializers.CharField()
    row = serializers.IntegerField(allow_null=True)
    value = serializers.CharField(allow_null=True)


class ErrorSerializer(serializers.Serializer):
    """The body of every error response (documented in the schema)."""

    detail = serializers.CharField()
    # A declared field named like Serializer.errors: DRF moves it into _declared_fields.
    errors = FieldErrorSerializer(many=True)  # type: ignore[assignment]


_MISSING = object()


def _shown_value(value: Any) -> str | None:
    if value is _MISSING or value is None or isinstance(value, (dict, list)):
        return None
    text = str(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _child(source: Any, key: Any) -> Any:
    try:
        return source[key]
    except (KeyError, IndexError, TypeError):
        return _MISSING


def _flatten(detail: Any, source: Any = _MISSING, prefix: str = "") -> list[dict[str, Any]]:
    """Turn DRF's nested validation errors into flat rows naming the field path and the value sent.

    {"scores": {"specificity": ["A valid integer is required."]}} becomes
    [{"field": "scores.specificity", "message": "...", "row": None, "value": "x"}].
    """
    rows: list[dict[str, Any]] = []
    if isinstance(detail, dict):
        for key, value in detail.items():
            inner = source if key == "non_field_errors" else _child(source, key)
            name = str(key) if not prefix else f"{prefix}.{key}"
            rows += _flatten(value, inner, prefix if key == "non_field_errors" else name)
    elif (
        isinstance(detail, list) and detail and all(not isinstance(i, (dict, list)) for i in detail)
    ):
        rows += [
            {
                "field": prefix or "non_field_errors",
                "message": str(item),
                "row": None,
                "value": _shown_value(source),
            }
            for item in detail
        ]
    elif isinstance(detail, list):
        for index, item in enumerate(detail):
            rows += _flatten(item, _child(source, index), f"{prefix}[{index}]")
    else:
        rows.append(
            {
                "field": prefix or "non_field_errors",
                "message": str(detail),
                "row": None,
                "value": _shown_value(source),
            }
        )
    return rows


def service_unavailable(exc: BaseException | None) -> ServiceUnavailable | None:
    """The ServiceUnavailable error an outage exception stands for (None for other errors)."""
    if isinstance(exc, ServiceUnavailable):
        return exc
    dependency = outage_of(exc)
    if dependency is None:
        return None
    return ServiceUnavailable(
        unavailable_message(dependency),
        errors=[FieldError(dependency, "unreachable; try again in a few seconds")],
    )


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    unavailable = service_unavailable(exc)
    if unavailable is not None:
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        if unavailable.errors:
            headers["X-Unavailable"] = unavailable.errors[0].field
        return Response(
            unavailable.as_dict(), status=status.HTTP_503_SERVICE_UNAVAILABLE, headers=headers
        )
    if isinstance(exc, ApplicationError):
        code: int = status.HTTP_400_BAD_REQUEST
        if isinstance(exc, PermissionDenied):
            code = status.HTTP_403_FORBIDDEN
        elif isinstance(exc, NotFound):
            code = status.HTTP_404_NOT_FOUND
        return Response(exc.as_dict(), status=code)

    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        request = context.get("request")
        sent = getattr(request, "data", _MISSING) if request is not None else _MISSING
        if request is not None and request.method in SAFE_METHODS:
            # A GET's input is its query string (list filters, paging).
            sent = request.query_params
        response.data = {
            "detail": "The request is not valid.",
            "errors": _flatten(exc.detail, sent),
        }
    elif isinstance(response.data, dict) and "detail" in response.data:
        response.data = {"detail": str(response.data["detail"]), "errors": []}
    else:
        response.data = {"detail": "The request failed.", "errors": _flatten(response.data)}
    return response


def id_field(**kwargs: Any) -> serializers.IntegerField:
    """A database id in input: a positive integer the id column can hold, else a 400."""
    return serializers.IntegerField(min_value=1, max_value=BIGINT_MAX, **kwargs)


def query_filters(serializer_class: type, request: Request) -> dict[str, Any]:
    """The list filters of a GET, validated like a body: a bad value (a NUL character, a number
    past what its column holds, an unknown choice) is a 400 naming the parameter."""
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return {k: v for k, v in serializer.validated_data.items() if v not in (None, "")}


def paginated_response(
    *, request: Any, view: Any, queryset: Any, serializer_class: type
) -> Response:
    """List responses are paginated the same way everywhere (limit/offset, PAGE_SIZE default)."""
    paginator = Pagination()
    page: list[Any] | None = paginator.paginate_queryset(queryset, request, view=view)
    return paginator.get_paginated_response(
        serializer_class(page, many=True, context={"request": request}).data
    )


def paginated_schema(name: str, serializer_class: type) -> serializers.Serializer:
    """The schema of a paginated list of `serializer_class` (APIViews get none automatically)."""
    return inline_serializer(
        name=name,
        fields={
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": serializer_class(many=True),
        },
    )


PAGINATION_PARAMETERS = [
    OpenApiParameter(
        "limit", int, description=f"Page size (default 100; at most {MAX_PAGE_SIZE})."
    ),
    OpenApiParameter("offset", int, description="Index of the first result."),
]

ERROR_RESPONSES = {
    400: ErrorSerializer,
    403: ErrorSerializer,
    404: ErrorSerializer,
}


class ReadOnly(BasePermission):
    """Endpoints that only read: any write is refused with 403 (never 405), for every role."""

    def has_permission(self, request: Any, view: Any) -> bool:
        return request.method in SAFE_METHODS
