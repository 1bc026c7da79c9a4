"""The local setup end to end on SQLite (no PostgreSQL, no Redis): the judge executor, the
metrics and, through the real bin/demo with its two workers, the whole pipeline."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.demo.processes import free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]
# Signs that a worker broke: any traceback, and SQLite's "database is locked" in particular.
BAD = ("Traceback", "OperationalError", "database is locked")


def _local_env(var: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        # The test settings point these at PostgreSQL and Redis; the local setup runs without.
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(PLURALIST_VAR_DIR=str(var), **extra)
    return env


def _manage(env: dict[str, str], *args: str, timeout: float = 60) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings.local"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _query(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
        return conn.execute(sql).fetchall()


def test_the_judge_executor_and_the_metrics_run_on_sqlite(tmp_path):
    var = tmp_path / "var"
    env = _local_env(var)
    _manage(env, "migrate", "--noinput")
    _manage(env, "demo", "--scale", "0.2")
    db = var / "pluralist.sqlite3"
    domain = _query(db, "SELECT key FROM catalog_domain ORDER BY key LIMIT 1")[0][0]

    study = json.loads(
        _manage(
            env,
            "judge_study",
            "--backend",
            "local",
            "--domain",
            domain,
            "--dimension",
            "specificity",
            "--shots",
            "2,5",
            "--seeds",
            "1",
            "--format",
            "json",
        )
    )
    assert study["predictions"] > 0 and study["failed"] == 0
    rows = study["alignment"]
    assert {r["config"] for r in rows} == {"zero_shot", "aggregate", "personalized"}
    # Zero-shot replies of the local baseline fall under the confidence threshold (n = 0).
    assert all(isinstance(r["n"], int) for r in rows)
    assert all(r["n"] > 0 for r in rows if r["k"] > 0), rows
    assert any(isinstance(r["alpha"], float) for r in rows)
    assert _query(db, f"SELECT status FROM judges_judgerun WHERE id = {study['run']}") == [
        ("done",)
    ]

    metrics = json.loads(_manage(env, "metrics", "--format", "json", "--n-boot", "50"))
    assert metrics["n_ratings"] > 0 and metrics["n_scored"] > 0
    alphas = [c["fine"].get("alpha") for c in metrics["cells"]]
    assert any(isinstance(a, float) for a in alphas), metrics["cells"][:3]


def _get_json(url: str, token: str) -> tuple[int, dict]:
    request = urllib.request.Request(url, headers={"Authorization": f"Token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, {}
    except OSError:
        return 0, {}


@pytest.mark.worker
def test_bin_demo_on_sqlite_computes_the_dashboards_and_judges_with_clean_worker_logs(tmp_path):
    port = free_port()
    var = tmp_path / "var"
    env = _local_env(var, PORT=str(port), PLURALIST_SKIP_INSTALL="1", PLURALIST_DEMO_SCALE="0.3")
    log = tmp_path / "demo.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(ROOT / "bin" / "demo")],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    db = var / "pluralist.sqlite3"
    base = f"http://127.0.0.1:{port}"
    logs = [var / "log" / "worker.log", var / "log" / "worker-judges.log"]
    try:
        wait_until(
            lambda: "Pluralist is running" in log.read_text() or proc.poll() is not None,
            90,
            "bin/demo to start",
            log,
        )
        assert proc.poll() is None, log.read_text()
        pids = re.search(r"Celery workers started \(pids (\d+) and (\d+);", log.read_text())
        assert pids, log.read_text()
        token = _manage(_local_env(var), "drf_create_token", "manager").split()[2]

        # The disagreement overview's snapshot, computed by the default worker.
        wait_until(
            lambda: _get_json(f"{base}/api/metrics/", token)[0] == 200,
            60,
            "a metrics snapshot",
            logs[0],
        )
        status, metrics = _get_json(f"{base}/api/metrics/", token)
        assert _query(db, "SELECT count(*) FROM disagreement_metricsnapshot WHERE status = 'done'")
        assert json.dumps(metrics).count('"alpha"') > 0

        # Automatic judge runs, scheduled by the default worker, executed by the judges worker.
        def evaluated() -> bool:
            return bool(
                _query(
                    db,
                    """
                SELECT 1 FROM judges_judgerun r
                WHERE r.purpose = 'loo_evaluation' AND r.status = 'done'
                  AND EXISTS (SELECT 1 FROM judges_judgeprediction p WHERE p.run_id = r.id)
                  AND EXISTS (SELECT 1 FROM judges_judgefinal f WHERE f.run_id = r.id)""",
                )
            )

        wait_until(evaluated, 60, "a finished judge evaluation with predictions", logs[1])
        # The alignment is stored by a task a few seconds after the run finished.
        wait_until(
            lambda: _get_json(f"{base}/api/judges/alignment/", token)[1].get("n_finals"),
            60,
            "a stored alignment snapshot",
            logs[0],
        )
        status, report = _get_json(f"{base}/api/judges/alignment/", token)
        assert status == 200 and report["n_finals"] > 0
        assert any(isinstance(r["alpha"], float) for r in report["curve"]), report["curve"][:3]
        # The findings snapshot (default worker): one domain's summary, picked out of the
        # stored JSON by SQLite's JSON functions (findings.selectors.domain_summary).
        domain = _query(db, "SELECT key FROM catalog_domain ORDER BY key LIMIT 1")[0][0]
        wait_until(
            lambda: _get_json(f"{base}/api/findings/?domain={domain}", token)[0] == 200,
            90,
            "a findings snapshot",
            logs[0],
        )
        status, findings = _get_json(f"{base}/api/findings/?domain={domain}", token)
        assert findings["findings"] and findings["sweep"], findings
        assert findings["scopes"][0]["n_rationales"] > 0, findings["scopes"][:1]
        # One study per domain, queued for the full k sweep behind the first evaluations.
        studies = _query(db, "SELECT shots FROM judges_judgerun WHERE purpose = 'study'")
        assert len(studies) == _query(db, "SELECT count(*) FROM catalog_domain")[0][0]
        assert all(json.loads(s[0]) == [0, 1, 2, 5, 9] for s in studies)

        for path in logs:
            text = path.read_text()
            assert "ready." in text
            for bad in BAD:
                assert bad not in text, f"{path.name}:\n{text[-4000:]}"
        # (task ids follow the name in "received"/"succeeded" lines, not in the start banner)
        assert "judges.judge_runs_schedule[" in logs[0].read_text()
        assert "judges.judge_run_execute[" in logs[1].read_text()
        assert "judges.judge_run_execute[" not in logs[0].read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    # Ctrl-C stopped both workers.
    for pid in map(int, pids.groups()):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
            time.sleep(0.2)
        assert (
            not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
        ), f"worker {pid} still running"
