"""Settings shared by every environment. Values come from the environment (django-environ)."""

from datetime import timedelta
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent
env = environ.Env()

DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    "apps.core",
    "apps.accounts",
    "apps.catalog",
    "apps.screening",
    "apps.disagreement",
    "apps.judges",
    "apps.demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes requires: turns a locked-out sign-in into the lockout response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    }
]

DATABASES = {
    "default": env.db("DATABASE_URL", default="postgres://postgres@127.0.0.1:5432/pluralist")
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
# Keep each gunicorn thread's connection for a minute instead of opening one per request (a new
# PostgreSQL connection costs a few ms of every submit); checked before reuse so a restarted
# database is noticed. Connections = gunicorn workers x threads (config/gunicorn.py).
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Django's standard four: not like the username or name, at least 8 characters, not one of the
# 20,000 most common passwords ("password"), not all digits ("12345678"). They apply where a
# password is chosen (admin, password change and reset forms, createsuperuser); demo and test
# users get theirs from set_password and are not re-validated.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Sign-in lockout (django-axes) on the login form and on POST /api/auth/token/ alike: after
# AXES_FAILURE_LIMIT wrong passwords for one username from one IP address, that pair is refused
# (429) for AXES_COOLOFF_TIME; a correct password before then resets the count. Locking the
# username+IP pair, not the username alone, stops guessing without letting a stranger lock a
# reviewer out from elsewhere. An admin unlocks early with `manage.py axes_reset_username NAME`.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "apps.accounts.lockout.lockout_response"
# Behind a reverse proxy, set to the number of proxies so the client's own address is locked
# (X-Forwarded-For is read only then: otherwise a client could forge it to dodge the lockout).
AXES_IPWARE_PROXY_COUNT = env.int("AXES_IPWARE_PROXY_COUNT", default=None)
if AXES_IPWARE_PROXY_COUNT:
    AXES_IPWARE_META_PRECEDENCE_ORDER = ("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR")

# API tokens expire this long after they are issued (apps/accounts/tokens.py); POST
# /api/auth/token/ then issues a new one and DELETE revokes the current one at once.
API_TOKEN_LIFETIME = timedelta(days=env.int("API_TOKEN_LIFETIME_DAYS", default=30))

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Imports of 1,000,000 ratings arrive as one upload.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=50 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

REST_FRAMEWORK = {
    # Token first: its WWW-Authenticate challenge makes a request without valid credentials (none,
    # a wrong or an expired token) a 401 on every endpoint, so a script knows to fetch a new
    # token; 403 then always means "signed in, but your role may not do this" (docs/api.md).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apps.accounts.tokens.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # limit/offset with bounds (?limit= capped at 1000, an offset past bigint is a 400).
    "DEFAULT_PAGINATION_CLASS": "apps.core.pagination.Pagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "apps.core.api.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Pluralist API",
    "DESCRIPTION": "Patents, ideas, rubrics, ratings, imports, disagreement metrics and judges.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI and Redoc are served from the vendored sidecar package, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Every operation documents the 400/401/403/404 the framework can answer (apps/core/schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "apps.core.schema.add_error_responses",
    ],
}

# Celery: the broker is Redis in production and tests, kombu's filesystem transport locally.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=env("REDIS_URL", default="redis://127.0.0.1:6379/0"))
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=60 * 60)
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=55 * 60)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True
# Judge runs can keep a worker busy for minutes; their own queue keeps metric recomputes and
# other short tasks from waiting behind them. Workers consume both (see bin/demo, compose).
CELERY_TASK_ROUTES = {"judges.*": {"queue": "judges"}}
# Seconds automatic judge runs wait after a rating change, so a burst lands in one run
# (bin/demo sets 0 for its initial import, where there is no burst to wait for).
JUDGE_DEBOUNCE_SECONDS = env.int("JUDGE_DEBOUNCE_SECONDS", default=30)

# LLM endpoint used by judges configured with the "openai" backend.
LLM_BASE_URL = env("LLM_BASE_URL", default="")
LLM_API_KEY = env("LLM_API_KEY", default="")
LLM_MODEL = env("LLM_MODEL", default="gpt-4o-mini")
LLM_TIMEOUT_SECONDS = env.float("LLM_TIMEOUT_SECONDS", default=60.0)
EMBEDDINGS_BASE_URL = env("EMBEDDINGS_BASE_URL", default="")
EMBEDDINGS_API_KEY = env("EMBEDDINGS_API_KEY", default="")
EMBEDDINGS_MODEL = env("EMBEDDINGS_MODEL", default="")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
}
