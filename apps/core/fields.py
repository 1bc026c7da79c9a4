"""Serializer fields for input that reaches PostgreSQL (one home for "no NUL in text").

DRF's CharField refuses NUL characters, but SlugRelatedField looks the value up as it comes and
PostgreSQL raises DataError (a 500) on a NUL in a query. These fields refuse it first, naming
the field like every other validation error.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

from apps.core.untrusted import nul_error


class SlugRelatedField(serializers.SlugRelatedField):
    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, str) and nul_error(data):
            raise serializers.ValidationError(nul_error(data))
        if isinstance(data, str) and len(data) > 200:
            raise serializers.ValidationError("is longer than any key (200 characters)")
        return super().to_internal_value(data)


def LongTextField(**kwargs: Any) -> serializers.CharField:  # noqa: N802 (used like a class)
    """A free-text field (abstract, claims, description) bounded by TEXT_MAX_CHARS."""
    return serializers.CharField(max_length=int(settings.TEXT_MAX_CHARS), **kwargs)
