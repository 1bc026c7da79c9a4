"""A real Celery worker process bound to the test database and a test Redis queue."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent


def worker_database_url() -> str:
    """The URL of the database pytest-django created (its NAME is already the test name)."""
    db = settings.DATABASES["default"]
    user = db.get("USER") or "postgres"
    auth = f"{user}:{db['PASSWORD']}@" if db.get("PASSWORD") else f"{user}@"
    return f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


class CeleryWorker:
    """Start `celery worker` as a subprocess; `kill()` simulates a crash (SIGKILL)."""

    def __init__(
        self,
        *,
        extra_env: dict[str, str] | None = None,
        pool: str = "solo",
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.extra_env = extra_env or {}
        self.pool = pool
        # More worker options, e.g. ("-B", "-s", path): run beat in this worker too.
        self.extra_args = extra_args
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = Path(tempfile.mkstemp(prefix="celery-worker-", suffix=".log")[1])

    def start(self, timeout: float = 30.0) -> CeleryWorker:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": worker_database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            **self.extra_env,
        }
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                f"--pool={self.pool}",
                "--concurrency=1",
                "--loglevel=INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-Q",
                "celery,judges",
                *self.extra_args,
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "ready." in self.log():
                return self
            if self.process.poll() is not None:
                raise RuntimeError(f"Celery worker exited early:\n{self.log()}")
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"Celery worker did not become ready:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


def purge_queue() -> None:
    from config.celery import app

    app.control.purge()


def wait_for(condition, *, timeout: float = 30.0, interval: float = 0.2, message: str = "") -> None:
    """Poll until condition() is truthy; fail with `message` otherwise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(interval)
    raise AssertionError(message or "condition not met in time")
