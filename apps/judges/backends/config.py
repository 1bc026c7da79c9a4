"""Where the backends read their defaults: Django settings when Django is configured, else the
caller's default (benches and plain-Python use run without Django)."""

from __future__ import annotations

from typing import Any


def setting_or_default(name: str, default: Any) -> Any:
    try:
        from django.conf import settings

        if settings.configured:
            return getattr(settings, name, default)
    except Exception:  # Django missing or misconfigured: fall back to the default
        pass
    return default
