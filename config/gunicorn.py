"""Gunicorn settings for the web container:
`gunicorn -c config/gunicorn.py config.wsgi:application`

Sizing (docs/notes/harden.md has the measurements behind it, from bench/bench_load.py):
- worker_class "gthread": each worker process serves `threads` requests at once. Pluralist's
  requests spend most of their time waiting on PostgreSQL (a rating submit is ~18 short queries),
  and a thread waiting on the database releases the GIL, so threads overlap those waits. With
  the old 3 sync workers, the 4th concurrent request waited for whole requests to finish:
  /healthz and static files queued behind 32 writers for seconds, past the health check's 5 s.
- threads = 32 per worker: a quick request (/healthz, a static file) finds a free thread and is
  answered while slow ones run, as long as concurrent requests stay below the thread count. A
  gthread worker accepts connections whether or not a thread is free, and the kernel hands new
  connections to workers unevenly; with few threads per worker a probe can land on the busier
  worker and queue there (measured: 2 x 8 threads let /healthz or the static file wait seconds
  behind 32 writers, depending on which worker it landed on; 1 x 40 did not).
- workers = half the CPU cores, at least 1 and at most 2: processes are what run Python in
  parallel, but PostgreSQL (same host under docker compose) needs cores too, and every thread
  holds one database connection (CONN_MAX_AGE): workers x threads = 32-64 connections, below
  PostgreSQL's default max_connections of 100 with room for Celery. Larger hosts: raise
  GUNICORN_WORKERS together with max_connections (or put PgBouncer in front).
All three can be overridden from the environment (GUNICORN_WORKERS, GUNICORN_THREADS,
GUNICORN_TIMEOUT) without a rebuild.
"""

from __future__ import annotations

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
worker_class = "gthread"
workers = int(os.environ.get("GUNICORN_WORKERS") or max(1, min(2, (os.cpu_count() or 2) // 2)))
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
