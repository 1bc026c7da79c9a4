"""Embedded default: SQLite and a filesystem Celery broker, so the demo needs no server."""

from pathlib import Path

from .base import *  # noqa: F403
from .base import BASE_DIR, cache_settings, env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
SECRET_KEY = env("DJANGO_SECRET_KEY", default="local-only-insecure-key-do-not-use-in-production")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["*"])

VAR_DIR = Path(env("PLURALIST_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'pluralist.sqlite3'}")
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The web server and the worker write to the same file: wait for locks instead of failing.
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}
    # SQLite cannot build the two shortlist constraints that treat NULLs as equal
    # (nulls_distinct=False, judges.JudgeShortlist / PanelShortlist): PostgreSQL enforces them;
    # in the embedded demo the services that write them (apps/judges/services/shortlists.py:
    # delete the old rows, then insert) keep them. Said here instead of on every bin/demo start.
    SILENCED_SYSTEM_CHECKS = ["models.W047"]

_broker_dir = VAR_DIR / "broker"
for _sub in ("out", "processed", "control"):
    (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "out"),
        "data_folder_out": str(_broker_dir / "out"),
        "processed_folder": str(_broker_dir / "processed"),
        "store_processed": False,
        # kombu's broadcast (pidbox) exchanges; its default is ./control in the working directory.
        "control_folder": str(_broker_dir / "control"),
    }
# Recomputed from the local broker: Redis only when the environment points at one.
CACHE_URL = env("CACHE_URL", default=env("REDIS_URL", default=CELERY_BROKER_URL))
CACHES = cache_settings(CACHE_URL)
WHITENOISE_USE_FINDERS = True
# Large uploads wait for the worker here (apps/catalog/services/import_jobs.py).
IMPORT_SPOOL_DIR = env("IMPORT_SPOOL_DIR", default=str(VAR_DIR / "import-spool"))
