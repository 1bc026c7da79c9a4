"""bin/demo end to end: SQLite + filesystem broker, migrations, demo data, worker, web server."""

from __future__ import annotations

import http.cookiejar
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.demo.processes import free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status
    except OSError:
        return 0


# Every page a role reaches from the menu, read on the embedded SQLite default: queries that
# PostgreSQL accepts and SQLite does not (DISTINCT ON, say) only show here.
MANAGER_PAGES = (
    "/",
    "/disagreement/",
    "/disagreement/strictness/",
    "/disagreement/agreement/",
    "/disagreement/panel/",
    "/disagreement/contested/",
    "/disagreement/split/",
    "/disagreement/ideas/{idea}/",
    "/screening/ratings/",
    "/judges/",
    "/judges/runs/",
    "/judges/predictions/",
    "/judges/cases/{idea}/",
    "/findings/",
    "/decisions/decide/",
    "/decisions/routing/",
    "/decisions/marks/",
    "/decisions/marks.csv",
    "/decisions/memo/",
    "/panels/",
)
REVIEWER_PAGES = ("/", "/screening/", "/screening/ideas/{idea}/", "/judges/me/")
ADMIN_PAGES = ("/catalog/admin/", "/catalog/admin/archive/", "/admin/")


def _signed_in(base: str, username: str) -> urllib.request.OpenerDirector:
    """An opener holding a session for `username`, signed in through the sign-in form."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{base}/accounts/login/", timeout=30).read()
    token = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
    form = urllib.parse.urlencode(
        {"username": username, "password": "pluralist-demo", "csrfmiddlewaretoken": token}
    ).encode()
    request = urllib.request.Request(
        f"{base}/accounts/login/", data=form, headers={"Referer": f"{base}/accounts/login/"}
    )
    with opener.open(request, timeout=30) as resp:
        assert "/accounts/login/" not in resp.url, f"{username} could not sign in"
    return opener


def _status(opener: urllib.request.OpenerDirector, url: str) -> int:
    try:
        with opener.open(url, timeout=60) as resp:
            resp.read()
            return resp.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.mark.worker
def test_bin_demo_serves_the_app_and_its_worker_consumes_tasks(tmp_path):
    port = free_port()
    var = tmp_path / "var"
    env = {
        k: v
        for k, v in os.environ.items()
        # The test settings point these at PostgreSQL and Redis; bin/demo must run without them.
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(
        PORT=str(port),
        PLURALIST_VAR_DIR=str(var),
        PLURALIST_SKIP_INSTALL="1",
        PLURALIST_DEMO_SCALE="0.2",
    )
    log = (tmp_path / "demo.log").open("w+")
    proc = subprocess.Popen(
        [str(ROOT / "bin" / "demo")],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        # bin/demo says it is running only once the server answers.
        wait_until(
            lambda: "Pluralist is running" in Path(log.name).read_text() or proc.poll() is not None,
            240,
            "the web server",
        )
        assert _get(f"{base}/accounts/login/") == 200
        output = Path(log.name).read_text()
        assert proc.poll() is None, output
        assert f"Pluralist is running at {base}/" in output
        assert "Demo data loaded" in output
        for word in (
            "admin",
            "manager",
            "reviewer (technical)",
            "reviewer (business)",
            "pluralist-demo",
        ):
            assert word in output
        assert _get(f"{base}/static/css/pluralist.css") == 200

        # Output a newcomer can read: no migration list, no pip warnings, no server banner or
        # request log (those go to var/log/server.log), and the product's own 404 page.
        _get(f"{base}/accounts/login/")
        output = Path(log.name).read_text()
        for noise in (
            "Applying ",
            "WARNING: Location",
            "Starting development server",
            "HTTP/1.1",
            "W047",  # SQLite's note on two constraints: said once, in config/settings/local.py
            "System check identified",
            "per-reviewer alpha",  # the item text parts' figures go to var/log/item-parts.log
        ):
            assert noise not in output, noise
        assert "Offline judge text measured per domain (" in output
        assert "per-reviewer alpha" in (var / "log" / "item-parts.log").read_text()
        assert "GET /accounts/login/" in (var / "log" / "server.log").read_text()
        try:
            urllib.request.urlopen(f"{base}/no-such-page/", timeout=5)
        except urllib.error.HTTPError as missing:
            assert missing.code == 404
            body = missing.read().decode()
            assert "There is nothing here" in body and "URLconf" not in body
        else:
            raise AssertionError("/no-such-page/ did not answer 404")

        # Every role's pages answer on SQLite (the reviewer's idea is one assigned to them).
        with sqlite3.connect(var / "pluralist.sqlite3") as db:
            idea = db.execute("SELECT id FROM catalog_idea ORDER BY id LIMIT 1").fetchone()[0]
            reviewer, reviewer_idea = db.execute(
                "SELECT u.username, a.idea_id FROM screening_assignment a JOIN accounts_user u"
                " ON u.id = a.reviewer_id WHERE u.role = 'reviewer' ORDER BY u.id, a.idea_id"
                " LIMIT 1"
            ).fetchone()
        for username, pages, idea_id in (
            ("manager", MANAGER_PAGES, idea),
            ("admin", MANAGER_PAGES + ADMIN_PAGES, idea),
            (reviewer, REVIEWER_PAGES, reviewer_idea),
        ):
            opener = _signed_in(base, username)
            failed = {
                page: code
                for page in pages
                if (code := _status(opener, base + page.format(idea=idea_id))) != 200
            }
            assert not failed, (username, failed)

        # The worker consumes the local filesystem queue.
        local = {
            **env,
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "CELERY_BROKER_URL": "filesystem://localhost/",
        }
        task_id = subprocess.run(
            [
                sys.executable,
                "-c",
                "import django; django.setup(); "
                "from apps.core.tasks import ping; print(ping.delay().id)",
            ],
            cwd=ROOT,
            env=local,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        worker_log = var / "log" / "worker.log"
        wait_until(
            lambda: f"core.ping[{task_id}] succeeded" in worker_log.read_text(),
            90,
            "the worker to run core.ping",
        )

        # A second worker serves the "judges" queue only, so judge runs never hold up ping or
        # a metrics recompute.
        judges_log = var / "log" / "worker-judges.log"
        wait_until(lambda: "ready." in judges_log.read_text(), 60, "the judges worker")
        assert "core.ping[" not in judges_log.read_text()
        queues = re.findall(r"\.> (\S+)\s+exchange=", judges_log.read_text())
        assert queues == ["judges"], queues

        # Web and workers share the SQLite file in write-ahead-log mode.
        with sqlite3.connect(var / "pluralist.sqlite3") as db:
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert "database is locked" not in worker_log.read_text()
        assert "database is locked" not in judges_log.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
    # Ctrl-C stopped the server and the worker.
    assert proc.returncode is not None
    leftover = subprocess.run(
        ["pgrep", "-f", f"runserver --noreload 127.0.0.1:{port}"], capture_output=True, text=True
    ).stdout.strip()
    assert not leftover


@pytest.mark.worker
def test_bin_demo_keeps_existing_data_and_still_prints_the_logins(tmp_path):
    var = tmp_path / "var"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(DJANGO_SETTINGS_MODULE="config.settings.local", PLURALIST_VAR_DIR=str(var))
    manage = [sys.executable, "manage.py"]
    subprocess.run(
        [*manage, "migrate", "--noinput"], cwd=ROOT, env=env, check=True, capture_output=True
    )
    first = subprocess.run(
        [*manage, "demo", "--if-empty", "--scale", "0.2"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    second = subprocess.run(
        [*manage, "demo", "--if-empty", "--scale", "0.2"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "Demo data loaded" in first
    assert "not loaded again" in second and "Demo data loaded" not in second
    assert "pluralist-demo" in second and "manager" in second


def _demo_refused(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """bin/demo run to its end with this environment (expected to stop at once)."""
    env = {**{k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}, **env}
    return subprocess.run(
        [str(ROOT / "bin" / "demo")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def test_bin_demo_stops_at_once_when_its_port_is_taken(tmp_path):
    """Another program listening on the port (an earlier demo): bin/demo says so and which
    setting picks another port, before installing, migrating or starting any worker."""
    var = tmp_path / "var"
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = _demo_refused(
            {"PORT": str(port), "PLURALIST_VAR_DIR": str(var), "PLURALIST_SKIP_INSTALL": "1"}
        )
    assert done.returncode == 1
    assert f"Cannot serve on 127.0.0.1:{port}: another program" in done.stderr
    assert f"PORT={port + 80} bin/demo" in done.stderr
    assert not var.exists()  # nothing prepared: no database, broker or logs
    assert "Pluralist is running" not in done.stdout


def test_bin_demo_names_a_port_that_is_not_a_number(tmp_path):
    done = _demo_refused(
        {"PORT": "80a", "PLURALIST_VAR_DIR": str(tmp_path / "var"), "PLURALIST_SKIP_INSTALL": "1"}
    )
    assert done.returncode == 1
    assert "PORT must be a port number (1-65535), not '80a'." in done.stderr
