"""The production web server (config/gunicorn.py, as docker-compose runs it) keeps answering
/healthz and static files while slow requests hold workers: with the old 3 sync workers, three
slow clients were enough to make the health check wait."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.demo.processes import free_port, wait_until
from tests.workers import worker_database_url

ROOT = Path(__file__).resolve().parents[2]
# The compose health check gives up after 5 s.
HEALTH_TIMEOUT_S = 5


@pytest.fixture
def gunicorn(django_db_setup):
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        # /healthz checks the database: point the server at the test database, which exists.
        "DATABASE_URL": worker_database_url(),
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_ACCESSLOG": "",
    }
    command = [
        str(Path(sys.executable).with_name("gunicorn")),
        "-c",
        "config/gunicorn.py",
        "config.wsgi:application",
    ]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)

    def ready() -> bool:
        # The master listens before its workers have loaded Django: wait for an answer.
        try:
            return _get(port, "/healthz") == 200
        except (OSError, http.client.HTTPException):
            return False

    wait_until(ready, timeout=60, what="gunicorn to answer /healthz")
    yield port
    server.terminate()
    server.wait(timeout=30)


def _get(port: int, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=HEALTH_TIMEOUT_S)
    conn.request("GET", path)
    response = conn.getresponse()
    response.read()
    return response.status


def test_it_answers_healthz_and_static_files_while_slow_clients_hold_requests(gunicorn):
    # Slow clients: each sends half a request and stalls, holding whatever serves it.
    slow = []
    for _ in range(8):
        sock = socket.create_connection(("127.0.0.1", gunicorn), timeout=HEALTH_TIMEOUT_S)
        sock.sendall(b"PUT /api/ideas/1/my-rating/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        slow.append(sock)
    try:
        assert _get(gunicorn, "/healthz") == 200
        assert _get(gunicorn, "/static/vendor/htmx-2.0.11/htmx.min.js") == 200
    finally:
        for sock in slow:
            sock.close()
