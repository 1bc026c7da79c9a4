"""Settings for bench/bench_load.py: production settings, run locally over plain HTTP.

The only differences: secrets and hosts for 127.0.0.1, no HTTPS redirect, and static files from a
temporary STATIC_ROOT through WhiteNoise's compressed storage without the manifest (the vendored
chart library points at a source map that is not shipped; the Dockerfile strips that line).
"""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only")
os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost")
os.environ.setdefault("DJANGO_SECURE_SSL_REDIRECT", "false")
os.environ.setdefault("DJANGO_SECURE_COOKIES", "false")

from config.settings.production import *  # noqa: E402, F403

STATIC_ROOT = os.environ["BENCH_STATIC_ROOT"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
