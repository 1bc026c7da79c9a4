import os

from django.core.wsgi import get_wsgi_application

from apps.core.gc_freeze import freeze_startup_objects

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
application = get_wsgi_application()


def _load_and_freeze() -> None:
    # The URLconf (and with it every view module) is otherwise imported by the first request;
    # loaded here, it is part of what the collector no longer scans.
    from django.urls import get_resolver

    _ = get_resolver().url_patterns
    freeze_startup_objects()


_load_and_freeze()
