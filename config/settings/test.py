"""Tests run against the real PostgreSQL and Redis (see .ci/run)."""

import os

from .base import *  # noqa: F403
from .base import BASE_DIR, DATABASES, cache_settings, env

DEBUG = False
SECRET_KEY = "test-only-key"
ALLOWED_HOSTS = ["*"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# bin/test runs the suite in several pytest-xdist processes; pytest-django gives each its own
# test database, and the defaults below give each its own Redis database and spool folder, so
# one process's workers never take another's tasks. A value set in the environment is used as
# it is: the workers a test starts inherit the one their test process chose.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_XDIST_INDEX = int(_XDIST_WORKER[2:]) if _XDIST_WORKER.startswith("gw") else 0
# A separate Redis database so test runs never consume a developer's queue.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=f"redis://127.0.0.1:6379/{15 - _XDIST_INDEX}")
# The cache lives in the same (per-run) Redis database as the broker, under its own key prefix.
CACHES = cache_settings(env("CACHE_URL", default=CELERY_BROKER_URL))
# Serve static files straight from STATICFILES_DIRS so browser tests need no collectstatic.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
# Sign-in lockout stays on for HTTP sign-ins; Client.login() (no request) skips it.
AUTHENTICATION_BACKENDS = [
    "apps.accounts.lockout.TestClientLockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# One connection per request as before: tests and live servers never keep connections around.
DATABASES["default"]["CONN_MAX_AGE"] = 0
# Spool files of import jobs: the test process and the workers it starts share this folder
# (each checkout its own).
IMPORT_SPOOL_DIR = env(
    "IMPORT_SPOOL_DIR", default=str(BASE_DIR / "var" / f"test-import-spool{_XDIST_WORKER}")
)
# The suite's own workers share the cores with the test process and browsers that wait on them:
# the idle scheduling class would leave them starved there (tests/core/test_worker_niceness.py
# turns it on to check it).
WORKER_SCHED_IDLE = env.bool("WORKER_SCHED_IDLE", default=False)
