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
    "apps.findings",
    "apps.decisions",
    "apps.panels",
    "apps.dataio",
    "apps.demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "apps.core.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # After WhiteNoise, so static files never wait for a slot (apps/core/middleware.py).
    "apps.core.middleware.ActiveRequestLimitMiddleware",
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

# Strict: this site's scripts and styles only, no inline script, no eval, no framing
# (apps.core.middleware.ContentSecurityPolicyMiddleware; docs/operations.md). The favicon is a
# data: URL. Set CONTENT_SECURITY_POLICY to "" to send none.
CONTENT_SECURITY_POLICY = env.str(
    "CONTENT_SECURITY_POLICY",
    default="; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "style-src-attr 'unsafe-inline'",
            "img-src 'self' data:",
            "font-src 'self'",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    ),
)

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
            # `|when`, the one date format of every page (apps/core/templatetags/ui.py).
            "builtins": ["apps.core.templatetags.ui"],
        },
    }
]
UI_DATETIME_FORMAT = "j M Y, H:i"
UI_DATE_FORMAT = "j M Y"

DATABASES = {
    "default": env.db("DATABASE_URL", default="postgres://postgres@127.0.0.1:5432/pluralist")
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
# Keep each gunicorn thread's connection for a minute instead of opening one per request (a new
# PostgreSQL connection costs a few ms of every submit); checked before reuse so a restarted
# database is noticed. Connections = gunicorn workers x threads (config/gunicorn.py).
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # Seconds to wait for a connection: an unreachable database host makes a request answer the
    # 503 outage page (apps/core/health.py) after this long, instead of after TCP's minutes.
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = env.int(
        "DB_CONNECT_TIMEOUT", default=5
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# After an import or a judge run, a table that grew is analyzed at most once in this many
# seconds unless it more than doubled (apps/core/table_statistics.py); unset: the server's own
# autovacuum_naptime, as autovacuum does.
TABLE_ANALYZE_INTERVAL_SECONDS = env.float("TABLE_ANALYZE_INTERVAL_SECONDS", default=None)

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

# E-mail (invitations, password reset): printed on the console unless an SMTP host is set.
EMAIL_HOST = env("EMAIL_HOST", default="")
EMAIL_BACKEND = env(
    "EMAIL_BACKEND",
    default="django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_PORT = env.int("EMAIL_PORT", default=587)
EMAIL_HOST_USER = env("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", default=False)
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=not EMAIL_USE_SSL)
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="Pluralist <pluralist@localhost>")
# Invitation and reset links stay valid this long (seconds), or until a password is set.
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=7 * 24 * 3600)

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
# Password reset requests (apps/accounts/services.py): per window, at most PER_IP from one client
# address (then 429) and PER_ADDRESS mails to one e-mail address (then answered alike, not sent).
PASSWORD_RESET_WINDOW_SECONDS = env.int("PASSWORD_RESET_WINDOW_SECONDS", default=3600)
PASSWORD_RESET_PER_IP = env.int("PASSWORD_RESET_PER_IP", default=20)
PASSWORD_RESET_PER_ADDRESS = env.int("PASSWORD_RESET_PER_ADDRESS", default=3)
# Cache key prefix of the counters (tests give each test its own).
PASSWORD_RESET_THROTTLE_PREFIX = "pwreset"
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

# Requests of one web process that run their view at once (0: no limit); static files and
# /healthz never wait (apps/core/middleware.py, sizing in config/gunicorn.py).
# Empty counts as unset (docker-compose passes it through empty).
WEB_ACTIVE_REQUESTS = int(env("WEB_ACTIVE_REQUESTS", default="") or 4)

# Imports of 1,000,000 ratings arrive as one upload.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=50 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# Bounds on what users upload (413/400 with a message beyond them, never a 500): an import file
# (CSV, JSON Lines, rubric) and an archive, in bytes; the longest long-text field (an abstract,
# claims, an idea's description) in characters, through the API, the forms and imports.
IMPORT_MAX_BYTES = env.int("IMPORT_MAX_BYTES", default=100 * 1024 * 1024)
# The installation archive: at most this many bytes unpacked in all (and uploaded), each file
# split into parts of at most ARCHIVE_PART_BYTES (and IMPORT_MAX_BYTES), so the per-file limit
# never refuses a backup the product wrote (apps/dataio/services/archive/members.py).
ARCHIVE_MAX_BYTES = env.int("ARCHIVE_MAX_BYTES", default=2 * 1024 * 1024 * 1024)
ARCHIVE_PART_BYTES = env.int("ARCHIVE_PART_BYTES", default=64 * 1024 * 1024)
TEXT_MAX_CHARS = env.int("TEXT_MAX_CHARS", default=100_000)
# The shape of an import file, checked on its bytes before any parser reads it (issue 29: a
# 1,000,000-column header kept pandas busy for hours, its cost growing with the square of the
# columns): the columns of a CSV header or the keys of JSON Lines records, the characters of one
# column name, the bytes of one line. Cells are bounded by TEXT_MAX_CHARS once parsed.
IMPORT_MAX_COLUMNS = env.int("IMPORT_MAX_COLUMNS", default=64)
IMPORT_MAX_COLUMN_CHARS = env.int("IMPORT_MAX_COLUMN_CHARS", default=100)
IMPORT_MAX_LINE_BYTES = env.int("IMPORT_MAX_LINE_BYTES", default=4 * 1024 * 1024)
# Uploads larger than this are imported by the worker, not inside the web request (issue 29.2):
# the web process checks the file's shape, writes it to IMPORT_SPOOL_DIR, stores an import job
# and answers at once (202 from the API; the page polls the job). Below it the import answers
# in the request as before. Chosen from bench/bench_import_upload.py (docs/operations.md).
IMPORT_BACKGROUND_BYTES = env.int("IMPORT_BACKGROUND_BYTES", default=1024 * 1024)
# Where uploads wait for the worker: a folder the web and the worker processes share (a volume
# in docker-compose.yml). A spool file is deleted when its job ends, and by the periodic
# `catalog-import-jobs` job when it outlives IMPORT_SPOOL_STALE_SECONDS without an active job.
IMPORT_SPOOL_DIR = env("IMPORT_SPOOL_DIR", default=str(BASE_DIR / "var" / "import-spool"))
IMPORT_SPOOL_STALE_SECONDS = env.int("IMPORT_SPOOL_STALE_SECONDS", default=3600)
# Import jobs one admin may have queued or running at once (each holds a spool file).
IMPORT_MAX_ACTIVE_JOBS = env.int("IMPORT_MAX_ACTIVE_JOBS", default=3)
# A running job's worker writes a heartbeat every third of this; a job whose heartbeat is older
# (its worker died: SIGKILL, OOM) is sent again by the periodic job every IMPORT_RECLAIM_SECONDS,
# at most IMPORT_JOB_MAX_ATTEMPTS times in all. A queued job no worker took after
# IMPORT_REQUEUE_AFTER_SECONDS lost its message (a Redis restart) and is sent again.
IMPORT_LEASE_SECONDS = env.float("IMPORT_LEASE_SECONDS", default=60.0)
IMPORT_RECLAIM_SECONDS = env.int("IMPORT_RECLAIM_SECONDS", default=30)
IMPORT_REQUEUE_AFTER_SECONDS = env.int("IMPORT_REQUEUE_AFTER_SECONDS", default=600)
IMPORT_JOB_MAX_ATTEMPTS = env.int("IMPORT_JOB_MAX_ATTEMPTS", default=3)

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
    # The run status appears in two components (Run, RunDetail): one name for its enum.
    "ENUM_NAME_OVERRIDES": {"JudgeRunStatusEnum": "apps.judges.models.JudgeRun.Status"},
    # Every operation documents the 400/401/403/404 the framework can answer (apps/core/schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "apps.core.schema.add_error_responses",
    ],
}

# Celery: the broker is Redis in production and tests, kombu's filesystem transport locally.
CELERY_BROKER_URL = env(
    "CELERY_BROKER_URL", default=env("REDIS_URL", default="redis://127.0.0.1:6379/0")
)
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=60 * 60)
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=55 * 60)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True
# Niceness of the worker and beat processes (config/celery.py): on a host shared with the web
# server, the web gets the CPU first. 0 runs them at the web's priority.
WORKER_NICENESS = env.int("WORKER_NICENESS", default=10)
# Linux's idle scheduling class for the worker and beat on top of the niceness: they run only
# when no web or database process wants the core (niceness alone still gave them a tenth of
# it, enough to push submit p95 past 150 ms; bench/bench_load.py --beside worker:idle).
# Off where the worker has a machine of its own and should use it whole.
WORKER_SCHED_IDLE = env.bool("WORKER_SCHED_IDLE", default=True)
# Judge runs can keep a worker busy for minutes; their own queue keeps metric recomputes and
# other short tasks from waiting behind them. Workers consume both (see bin/demo, compose).
CELERY_TASK_ROUTES = {"judges.*": {"queue": "judges"}}
# Redis redelivers an unacknowledged message (acks_late) only after `visibility_timeout`.
# Judge runs do not rely on it: a run's worker heartbeats its lease, and the reclaim job below
# re-enqueues a run whose heartbeat went stale within about JUDGE_LEASE_SECONDS +
# JUDGE_RECLAIM_SECONDS. So the timeout is set just above the hard task time limit: a task that is
# still running (up to CELERY_TASK_TIME_LIMIT) is never redelivered to a second worker, and a
# message lost with its worker is still redelivered eventually as a last resort. Redis's
# default (1 hour) was below the time limit plus queueing, and was the only recovery path.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int(
        "CELERY_VISIBILITY_TIMEOUT", default=CELERY_TASK_TIME_LIMIT + 10 * 60
    )
}
# Periodic jobs: run with a beat process (docker-compose `beat`) or a worker started with -B
# (bin/demo). The reclaim is what resumes runs whose worker died.
CELERY_BEAT_SCHEDULE = {
    "judges-reclaim": {
        "task": "judges.judge_runs_reclaim",
        "schedule": float(env.int("JUDGE_RECLAIM_SECONDS", default=30)),
        # Short work: the default queue, never behind a long judge run.
        "options": {"queue": "celery", "expires": 60},
    },
    "panels-reclaim": {
        "task": "panels.panel_runs_reclaim",
        "schedule": float(env.int("JUDGE_RECLAIM_SECONDS", default=30)),
        "options": {"queue": "celery", "expires": 60},
    },
    # The offline judge's item text parts, measured again per domain (services/item_parts.py):
    # a few seconds per domain, and ratings drift slowly, so once a day by default.
    "judges-item-parts": {
        "task": "judges.item_parts_measure",
        "schedule": float(env.int("JUDGE_ITEM_PARTS_SECONDS", default=24 * 3600)),
        "options": {"expires": 3600},
    },
    # Queued snapshots whose message was lost with Redis: sent again (snapshots.resend_overdue).
    "disagreement-resend": {
        "task": "disagreement.metrics_resend_lost",
        "schedule": float(env.int("SNAPSHOT_RESEND_SECONDS", default=30)),
        "options": {"queue": "celery", "expires": 60},
    },
    "decisions-resend": {
        "task": "decisions.resend_lost",
        "schedule": float(env.int("SNAPSHOT_RESEND_SECONDS", default=30)),
        "options": {"queue": "celery", "expires": 60},
    },
    # Import jobs whose worker died or whose message was lost: sent again; spool files of ended
    # or abandoned jobs: deleted (apps.dataio.services.import_jobs).
    "catalog-import-jobs": {
        "task": "catalog.import_jobs_reclaim",
        "schedule": float(env.int("IMPORT_RECLAIM_SECONDS", default=30)),
        "options": {"queue": "celery", "expires": 60},
    },
    "findings-resend": {
        "task": "findings.resend_lost",
        "schedule": float(env.int("SNAPSHOT_RESEND_SECONDS", default=30)),
        "options": {"queue": "celery", "expires": 60},
    },
}
# What runs after ratings change (after their commit), in order: each is called with
# reviewer_ids=[...] (apps/core/hooks.py). The apps that read ratings sit above screening, which
# stores them; this list, not an import, is how a rating reaches them. A hook computes nothing
# itself: it queues a debounced snapshot or schedules runs.
RATINGS_CHANGED_HOOKS = [
    # the metric snapshot (the dashboards)
    "apps.disagreement.services.metrics_ratings_changed",
    # the findings snapshot at the default threshold
    "apps.findings.services.findings_ratings_changed",
    # the decision snapshot (Decide)
    "apps.decisions.services.decisions_inputs_changed",
    # the reviewers' automatic judge runs
    "apps.judges.services.judge_ratings_changed",
]
# What runs after a prediction run finishes (after its commit): the decision board weighs the
# predicted scores.
PREDICTIONS_CHANGED_HOOKS = [
    "apps.decisions.services.decisions_inputs_changed",
]

# The sections of the idea page (/disagreement/ideas/<id>/, apps/disagreement/views/pages.py)
# that apps above disagreement own: each is called with idea= and viewer= and returns the
# context its fragment (included by templates/disagreement/idea_detail.html) reads.
IDEA_PAGE_SECTIONS = [
    # rank, interval and P(top) on Decide's board (templates/decisions/_idea_standing.html)
    "apps.decisions.views.idea_standing_context",
    # the points raised in rationales (templates/findings/_idea_findings.html)
    "apps.findings.views.idea_findings_context",
    # the LLM panel's scores, apart from people's (templates/panels/_idea_panel.html)
    "apps.panels.views.idea_panel_context",
]

# A queued snapshot (metrics, alignment) still waiting this many seconds after its message was due
# lost the message (a Redis restart): the beat jobs send it again, within 2x this after the loss.
SNAPSHOT_RESEND_SECONDS = env.int("SNAPSHOT_RESEND_SECONDS", default=30)

# Seconds automatic judge runs wait after a rating change, so a burst lands in one run
# (bin/demo sets 0 for its initial import, where there is no burst to wait for).
JUDGE_DEBOUNCE_SECONDS = env.int("JUDGE_DEBOUNCE_SECONDS", default=30)
# A queued run (or scheduling) no worker picked up after this long lost its message: sent again.
JUDGE_REQUEUE_AFTER_SECONDS = env.int("JUDGE_REQUEUE_AFTER_SECONDS", default=600)
# The run lock is a lease: a worker owns a run's chunk while it heartbeats (before each stored
# batch) more often than JUDGE_LEASE_SECONDS; a dead worker's chunk is taken over after that.
# The reclaim job runs every JUDGE_RECLAIM_SECONDS: a dead worker's run resumes within
# lease + reclaim + queue wait.
JUDGE_LEASE_SECONDS = env.float("JUDGE_LEASE_SECONDS", default=45.0)
JUDGE_RECLAIM_SECONDS = env.int("JUDGE_RECLAIM_SECONDS", default=30)
# LLM runs are split into chunks of this many calls, processed by every worker in parallel
# (add workers to go faster). Local runs are one chunk: they are judged in vectorised batches.
JUDGE_LLM_CHUNK_CALLS = env.int("JUDGE_LLM_CHUNK_CALLS", default=64)
# Per-seed predictions below a configuration's confidence threshold are discarded. Default for
# new local configurations: 21, the lowest value that still discards the local zero-shot guess
# (its confidence is capped at 20: it has no evidence); few-shot confidences are calibrated on
# leave-one-out results and keep 100 % coverage on the demo (apps/judges/backends/local.py,
# RECOMMENDED_THRESHOLD; docs/judges.md).
JUDGE_LOCAL_CONFIDENCE_THRESHOLD = env.int("JUDGE_LOCAL_CONFIDENCE_THRESHOLD", default=21)
# LLM configurations: the paper's threshold (Dong et al. 2024).
JUDGE_LLM_CONFIDENCE_THRESHOLD = env.int("JUDGE_LLM_CONFIDENCE_THRESHOLD", default=80)
# Ideas per reviewer shortlist (per dimension and over all dimensions), stored when a
# prediction run finishes (apps.judges.engine.shortlist).
JUDGE_SHORTLIST_SIZE = env.int("JUDGE_SHORTLIST_SIZE", default=10)
# Seconds between the first judge run of a burst finishing and the alignment snapshot that reads
# the burst (apps/judges/services/alignment.py); one computation per scope per burst.
ALIGNMENT_DEBOUNCE_SECONDS = env.int("ALIGNMENT_DEBOUNCE_SECONDS", default=5)
# While a burst of automatic runs lasts (an import, a refresh), the alignment and the decision
# board are recomputed when its last run finishes, and at most once per this many seconds before
# (apps/judges/services/bursts.py).
JUDGE_BURST_MAX_WAIT_SECONDS = env.int("JUDGE_BURST_MAX_WAIT_SECONDS", default=300)
# The judges' keys in the shared cache (burst markers, the history gaps); each test has its own.
JUDGE_CACHE_PREFIX = "judges"

# LLM endpoint used by judges configured with the "openai" backend.
LLM_BASE_URL = env("LLM_BASE_URL", default="")
LLM_API_KEY = env("LLM_API_KEY", default="")
LLM_MODEL = env("LLM_MODEL", default="gpt-4o-mini")
# Seconds one HTTP call may take (a slow local server needs room for a cold 9-example prompt).
LLM_TIMEOUT_SECONDS = env.float("LLM_TIMEOUT_SECONDS", default=120.0)
# Longest reply, in tokens: a judgment is one short JSON object (~60 tokens); unbounded, a small
# local model writes until its context is full. 0 sends no limit.
LLM_MAX_TOKENS = env.int("LLM_MAX_TOKENS", default=200)
# auto (json_schema, then json_object, then text, discovered per endpoint), or one of those.
LLM_RESPONSE_FORMAT = env("LLM_RESPONSE_FORMAT", default="auto")
# Most calls in flight to one endpoint from one worker process (0 = no limit beyond the
# configuration's concurrency). A llama.cpp server with one slot wants 1 or 2 (docs/judges.md).
LLM_MAX_CONCURRENCY = env.int("LLM_MAX_CONCURRENCY", default=0)
# Retries of 408/409/429/5xx/timeouts/connection errors by the openai SDK (honours Retry-After).
LLM_MAX_RETRIES = env.int("LLM_MAX_RETRIES", default=5)
# Other endpoints a judge configuration's base_url may name (SSRF guard): LLM_BASE_URL is always
# allowed, anything else must be listed here (comma-separated in the environment).
LLM_ALLOWED_BASE_URLS = env.list("LLM_ALLOWED_BASE_URLS", default=[])
# Prices (USD per million tokens) for the run cost estimate.
LLM_PRICE_IN_PER_MTOK = env.float("LLM_PRICE_IN_PER_MTOK", default=0.15)
LLM_PRICE_OUT_PER_MTOK = env.float("LLM_PRICE_OUT_PER_MTOK", default=0.60)
EMBEDDINGS_BASE_URL = env("EMBEDDINGS_BASE_URL", default="")
EMBEDDINGS_API_KEY = env("EMBEDDINGS_API_KEY", default="")
EMBEDDINGS_MODEL = env("EMBEDDINGS_MODEL", default="")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"client_errors_in_one_line": {"()": "apps.core.logging.ClientErrorsInOneLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        # django-axes announces its configuration at INFO in every process; lockouts are WARNING.
        "axes": {"level": env("AXES_LOG_LEVEL", default="WARNING")},
        # A 403 or 404 is one line, without the traceback of the exception that made it.
        "django.request": {"filters": ["client_errors_in_one_line"]},
    },
}


def cache_settings(url: str) -> dict[str, dict[str, object]]:
    """Django's cache: Redis when a redis:// URL is configured, so every web and worker process
    shares entries (remote embeddings, for one); otherwise a per-process memory cache."""
    if url.startswith(("redis://", "rediss://")):
        return {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": url,
                "KEY_PREFIX": "pluralist",
                "TIMEOUT": 24 * 3600,
            }
        }
    return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


# CACHE_URL, else REDIS_URL, else the broker's Redis (a filesystem broker means no Redis).
CACHE_URL = env("CACHE_URL", default=env("REDIS_URL", default=CELERY_BROKER_URL))
CACHES = cache_settings(CACHE_URL)

# Findings (docs/metrics.md "Findings"): two finding units share a finding only when every pair is
# at least this cosine-similar; seconds between a rating change and the recompute that reads it.
FINDINGS_SIMILARITY_THRESHOLD = env.float("FINDINGS_SIMILARITY_THRESHOLD", default=0.5)
FINDINGS_DEBOUNCE_SECONDS = env.int("FINDINGS_DEBOUNCE_SECONDS", default=30)
