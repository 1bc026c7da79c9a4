"""Private, throwaway servers that a test may stop and start: never the shared ones.

- PrivateRedis: a redis-server on a free port without persistence (a restart loses every queued
  message, like a Redis restart in production that did not keep its data).
- PrivatePostgres: a PostgreSQL cluster initialised in a temporary folder and served on a free
  port; `copy_database` fills it with a copy of the test database (schema and rows), so the
  test's live server and workers can be pointed at it and it can be stopped under them.
The shared PostgreSQL (5432) and Redis (6379) are never stopped, restarted or reconfigured.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connections

from tests.workers import worker_database_url


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, *, up: bool, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            if up:
                return
        except OSError:
            if not up:
                return
        time.sleep(0.1)
    raise RuntimeError(f"port {port} did not go {'up' if up else 'down'} in {timeout} s")


class PrivateRedis:
    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_for_port(self.port, up=True, timeout=10)
        except RuntimeError as exc:
            raise RuntimeError("the private redis-server did not start") from exc

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def postgres_bin() -> Path | None:
    """The newest PostgreSQL server binaries on this machine (Debian keeps them out of PATH)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4])
    )
    if found:
        return Path(found[-1]).parent
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).parent if pg_ctl else None


class PrivatePostgres:
    """A cluster of its own. initdb and pg_ctl refuse to run as root, so as root they run as the
    `postgres` system user (runuser), on a folder that user owns."""

    def __init__(self) -> None:
        bin_dir = postgres_bin()
        if bin_dir is None:
            raise RuntimeError("no PostgreSQL server binaries (initdb, pg_ctl) found")
        self.bin = bin_dir
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="pluralist-private-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._as: list[str] = []
        if os.geteuid() == 0:
            self._as = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.root, user="postgres")

    def _run(self, *args: str) -> None:
        subprocess.run(
            [*self._as, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )

    def init(self) -> PrivatePostgres:
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        )
        return self

    def start(self) -> None:
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-w",
            "-o",
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off "
            "-c max_connections=50",
            "start",
        )
        _wait_for_port(self.port, up=True)

    def stop(self) -> None:
        """A fast shutdown, like `systemctl stop postgresql`: sessions are cut, nothing is lost."""
        if (self.data / "postmaster.pid").exists():
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        _wait_for_port(self.port, up=False)

    def destroy(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def copy_database(self, source_url: str, name: str) -> None:
        """Create `name` here as a copy (schema and rows) of the database at `source_url`."""
        subprocess.run(
            ["psql", self.url("postgres"), "-qc", f'CREATE DATABASE "{name}"'],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        dump = subprocess.run(
            ["pg_dump", "--no-owner", "--no-privileges", source_url],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            ["psql", "-q", "-v", "ON_ERROR_STOP=1", self.url(name)],
            input=dump.stdout,
            check=True,
            stdout=subprocess.DEVNULL,
        )


@contextmanager
def served_by_private_cluster() -> Iterator[PrivatePostgres]:
    """Copy the test database into a private cluster and point every connection of this process
    (the test client's, the live server's threads') at it; undone on exit."""
    if postgres_bin() is None:
        pytest.skip("needs the PostgreSQL server binaries (initdb, pg_ctl)")
    cluster = PrivatePostgres().init()
    cluster.start()
    settings_dict = connections["default"].settings_dict
    name, port = settings_dict["NAME"], settings_dict["PORT"]
    try:
        connections.close_all()
        cluster.copy_database(worker_database_url(), name)
        # Every thread's connection is built from this one dict (django.db.connections.settings).
        settings_dict["PORT"] = str(cluster.port)
        yield cluster
    finally:
        settings_dict["PORT"] = port
        connections.close_all()
        cluster.destroy()


@contextmanager
def celery_sending_to(url: str) -> Iterator[None]:
    """Messages this process sends (the services' dispatch) go to the broker at `url`."""
    from config.celery import app

    def reset_pools() -> None:
        # The connection and producer pools were built for the old URL; looked up again on next
        # use (kombu keeps one pool per URL, so they are not closed: the old URL's is reused).
        app._pool = None
        app.amqp._producer_pool = None

    before = app.conf.broker_url
    app.conf.broker_url = url
    reset_pools()
    try:
        yield
    finally:
        app.conf.broker_url = before
        reset_pools()
