"""What the web process depends on, whether it answers, and which failures mean it does not.

Two dependencies: the database (PostgreSQL) and the broker (Redis, which is also the cache).
- ``check_all`` asks each one once, with short timeouts, for ``/healthz``: one ``SELECT 1`` on
  the thread's own connection (kept between requests, so usually no new connection) and one Redis
  ``PING`` on a shared connection pool. Both cost well under a millisecond when all is well.
- ``outage_of(exc)`` names the dependency an exception says is unreachable (a refused or dropped
  connection, a server shutting down or starting up, too many connections), or None for any
  other error. A deadlock, a cancelled statement or a constraint violation is a bug or bad luck,
  not an outage, and stays a 500. The error handlers (apps/core/views.py for pages and
  apps/core/api.py for the API) turn an outage into a 503 that names the dependency; nothing
  else changes, so every request recovers by itself once the dependency is back.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Literal

import redis
from celery import current_app
from django.conf import settings
from django.db import Error as DatabaseError
from django.db import InterfaceError as DatabaseInterfaceError
from django.db import OperationalError as DatabaseOperationalError
from django.db import connection
from kombu.exceptions import OperationalError as BrokerOperationalError

Dependency = Literal["database", "broker"]

LABELS: dict[str, str] = {
    "database": "the database (PostgreSQL)",
    "broker": "the task queue (Redis)",
}
# Seconds a client should wait before trying again (the Retry-After header of every 503).
RETRY_AFTER_SECONDS = 5
# Seconds the broker check may take: a hung Redis must not hold /healthz.
BROKER_TIMEOUT_SECONDS = 1.0

# SQLSTATE classes and codes that mean "the database cannot serve you now": 08 connection
# exception, 53 insufficient resources (too many connections, out of memory or disk), 57P01-03
# administrator shutdown, crash shutdown, cannot connect now (starting up or shutting down).
_OUTAGE_SQLSTATE_CLASSES = ("08", "53")
_OUTAGE_SQLSTATES = ("57P01", "57P02", "57P03")


@dataclass(frozen=True)
class Check:
    dependency: Dependency
    ok: bool
    ms: float
    error: str = ""

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"status": "ok" if self.ok else "down", "ms": round(self.ms, 1)}
        if self.error:
            out["error"] = self.error
        return out


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or exc.__class__.__name__
    return text if len(text) <= 200 else text[:197] + "..."


def check_database() -> Check:
    """``SELECT 1`` on this thread's connection. A connection that fails is closed, so the next
    request (or check) opens a new one: that is how the web recovers after a restart."""
    start = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        try:
            connection.close()
        except DatabaseError:
            pass
        return Check("database", False, (time.perf_counter() - start) * 1000, _short(exc))
    return Check("database", True, (time.perf_counter() - start) * 1000)


_clients: dict[str, redis.Redis] = {}
_clients_lock = threading.Lock()


def _redis_client(url: str) -> redis.Redis:
    """One client (with its connection pool) per URL and process, so a check reuses a
    connection instead of opening one."""
    with _clients_lock:
        client = _clients.get(url)
        if client is None:
            client = redis.Redis.from_url(
                url,
                socket_connect_timeout=BROKER_TIMEOUT_SECONDS,
                socket_timeout=BROKER_TIMEOUT_SECONDS,
            )
            _clients[url] = client
        return client


def check_broker() -> Check:
    """``PING`` the broker when it is Redis; another transport (kombu's filesystem broker of the
    local settings) is checked by opening a connection to it."""
    url = str(settings.CELERY_BROKER_URL)
    start = time.perf_counter()
    try:
        if url.startswith(("redis://", "rediss://")):
            _redis_client(url).ping()
        else:
            with current_app.connection_for_write() as conn:
                conn.ensure_connection(max_retries=1)
    except Exception as exc:  # redis-py and kombu raise several types for an unreachable server
        return Check("broker", False, (time.perf_counter() - start) * 1000, _short(exc))
    return Check("broker", True, (time.perf_counter() - start) * 1000)


def check_all() -> list[Check]:
    return [check_database(), check_broker()]


def _sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a database error (Django wraps the driver's exception as __cause__)."""
    for candidate in (exc, exc.__cause__):
        code = getattr(candidate, "sqlstate", None) or getattr(candidate, "pgcode", None)
        if code:
            return str(code)
    return None


def outage_of(exc: BaseException | None) -> Dependency | None:
    """The dependency that ``exc`` says is unreachable, or None when it is another error."""
    if exc is None:
        return None
    if isinstance(exc, DatabaseInterfaceError):
        return "database"  # "connection already closed": the server went away under it
    if isinstance(exc, DatabaseOperationalError):
        code = _sqlstate(exc)
        if code is None:
            # No SQLSTATE: the client could not connect or lost the connection (refused,
            # closed unexpectedly, timeout): the server never answered.
            return "database"
        if code.startswith(_OUTAGE_SQLSTATE_CLASSES) or code in _OUTAGE_SQLSTATES:
            return "database"
        return None
    if isinstance(exc, (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)):
        return "broker"
    if isinstance(exc, BrokerOperationalError):
        return "broker"
    return None


def unavailable_message(dependency: Dependency) -> str:
    return (
        f"The service is unavailable: {LABELS[dependency]} cannot be reached. Try again in a "
        f"few seconds; the service recovers by itself as soon as it is back."
    )
