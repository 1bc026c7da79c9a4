"""At most WEB_ACTIVE_REQUESTS views of one process run at once; /healthz and static files never
wait for a slot (issue 9.8, apps/core/middleware.py)."""

from __future__ import annotations

import threading
import time

from django.conf import settings as django_settings
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory

from apps.core.middleware import ActiveRequestLimitMiddleware


def test_views_past_the_limit_wait_for_a_slot_while_healthz_is_answered(settings):
    settings.WEB_ACTIVE_REQUESTS = 2
    release = threading.Event()
    lock = threading.Lock()
    in_view: list[str] = []
    peak = 0

    def view(request: HttpRequest) -> HttpResponse:
        nonlocal peak
        with lock:
            in_view.append(request.path)
            peak = max(peak, sum(p != "/healthz" for p in in_view))
        if request.path != "/healthz":
            release.wait(10)
        with lock:
            in_view.remove(request.path)
        return HttpResponse("ok")

    limited = ActiveRequestLimitMiddleware(view)
    factory = RequestFactory()
    writers = [
        threading.Thread(target=limited, args=(factory.put(f"/api/ideas/{i}/my-rating/"),))
        for i in range(5)
    ]
    for thread in writers:
        thread.start()
    deadline = time.monotonic() + 5
    while len(in_view) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    assert len(in_view) == 2, "two views run; the other three wait for a slot"

    # Both slots are taken, and the health check is still answered at once.
    assert limited(factory.get("/healthz")).status_code == 200

    release.set()
    for thread in writers:
        thread.join(10)
    assert not any(thread.is_alive() for thread in writers)
    assert peak == 2


def test_static_files_are_served_before_the_limit():
    order = django_settings.MIDDLEWARE
    assert order.index("whitenoise.middleware.WhiteNoiseMiddleware") < order.index(
        "apps.core.middleware.ActiveRequestLimitMiddleware"
    )


def test_zero_means_no_limit(settings):
    settings.WEB_ACTIVE_REQUESTS = 0
    assert ActiveRequestLimitMiddleware(lambda request: HttpResponse()).slots is None
