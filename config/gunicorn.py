"""Gunicorn settings for the web container:
`gunicorn -c config/gunicorn.py config.wsgi:application`

Sizing (docs/decisions/0003-web-server-gthread-and-active-request-limit.md has the
measurements behind it, from bench/bench_load.py):
- worker_class "gthread": each worker process serves `threads` requests at once, so a slow
  client, a request waiting on PostgreSQL or a long export holds one thread, not the process.
  With the old 3 sync workers, /healthz and static files queued behind 32 writers for seconds,
  past the health check's 5 s.
- threads = 32 per worker: more threads than a worker gets concurrent clients, so a quick
  request (/healthz, a static file) always finds a free thread. A gthread worker accepts
  connections whether or not a thread is free, and the kernel hands them to workers unevenly,
  so a worker with too few threads makes a probe wait behind the writers it happened to get.
- but at most WEB_ACTIVE_REQUESTS (4) of those threads run a view at once; the rest wait on a
  semaphore (apps/core/middleware.py). Thirty-two threads all running Python fight over the GIL
  and the database: on 2 cores with 2 x 32 threads, 32 back-to-back writers got 73-77 submits/s
  without the limit and 87-88 with it, and the static file's p95 fell from 135-202 ms to 26-29.
- workers = the CPU cores, at least 1 and at most 2: processes are what run Python in parallel,
  and every thread that ran a view holds one database connection (CONN_MAX_AGE): 2 x 32 = 64
  connections, below PostgreSQL's default max_connections of 100 with room for Celery. Larger
  hosts: raise GUNICORN_WORKERS together with max_connections (or put PgBouncer in front).
All of these can be overridden from the environment (GUNICORN_WORKERS, GUNICORN_THREADS,
GUNICORN_TIMEOUT, WEB_ACTIVE_REQUESTS) without a rebuild.
"""

from __future__ import annotations

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
worker_class = "gthread"
workers = int(os.environ.get("GUNICORN_WORKERS") or max(1, min(2, os.cpu_count() or 1)))
threads = int(os.environ.get("GUNICORN_THREADS") or 32)
# A request still running after this long is stuck; its worker is replaced.
timeout = int(os.environ.get("GUNICORN_TIMEOUT") or 60)
graceful_timeout = 30
# Browsers and the compose health check reuse connections for a few seconds.
keepalive = 5
# Connections waiting for a free thread; past this the kernel refuses new ones.
backlog = 2048
# Recycle workers now and then so a slow leak cannot grow forever; jitter avoids all at once.
max_requests = 5000
max_requests_jitter = 500
accesslog = os.environ.get("GUNICORN_ACCESSLOG", "-") or None
