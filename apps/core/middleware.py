"""Admission control for a web process (issue 9.8).

Measured in docs/decisions/0003-web-server-gthread-and-active-request-limit.md.

A gthread worker needs many threads so that slow clients, /healthz and static files always find a
free one, but when many of those threads run Python at once they fight over the GIL and the
database, and throughput drops (figures in config/gunicorn.py). So at most WEB_ACTIVE_REQUESTS
requests of one process run their view at a time; the others wait their turn on a semaphore,
which costs no CPU. Static files (WhiteNoise, earlier in the chain) and /healthz never wait: they
are cheap, and the health check must answer while the views are busy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

UNLIMITED_PATHS = frozenset({"/healthz"})


class ActiveRequestLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        limit = int(settings.WEB_ACTIVE_REQUESTS)
        self.slots = threading.BoundedSemaphore(limit) if limit > 0 else None

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if self.slots is None or request.path_info in UNLIMITED_PATHS:
            return self.get_response(request)
        with self.slots:
            return self.get_response(request)


class ContentSecurityPolicyMiddleware:
    """Every response carries settings.CONTENT_SECURITY_POLICY (unless a view set its own).

    The pages load only this site's scripts and styles (vendored htmx, Chart.js, Swagger UI);
    there is no inline script, no eval and no inline <style> anywhere, so the policy can say
    `script-src 'self'` and a template that slips an inline script in fails in the browser tests.
    Style *attributes* stay allowed (`style-src-attr 'unsafe-inline'`): progress bars set their
    width from the server, and a style attribute cannot run code.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.policy = str(getattr(settings, "CONTENT_SECURITY_POLICY", "") or "")

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if self.policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = self.policy
        return response
