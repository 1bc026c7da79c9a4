"""The scaling-out Compose file (docs/operations.md, "Scaling out") fits the base file and can be
scaled. This reads the files; it does not run them (no Docker engine in CI; the stack was run by
hand, docs/operations.md, "Compose with several workers")."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _services(name: str) -> dict:
    return yaml.safe_load((ROOT / name).read_text())["services"]


def test_the_scaled_workers_are_single_process_judge_workers_and_can_be_replicated():
    base, scale = _services("docker-compose.yml"), _services("docker-compose.scale.yml")
    worker = {**base["worker"], **scale["worker"]}
    # `--scale worker=N` refuses a fixed container name or a published port.
    assert "container_name" not in worker and "ports" not in worker
    command = worker["command"].split()
    assert command[command.index("-Q") + 1] == "judges"
    assert "--concurrency=1" in command


def test_the_default_queue_has_its_own_worker_built_from_the_base_worker():
    base, scale = _services("docker-compose.yml"), _services("docker-compose.scale.yml")
    default = scale["worker-default"]
    assert default["extends"] == {"file": "docker-compose.yml", "service": "worker"}
    assert "worker" in base
    command = default["command"].split()
    assert command[command.index("-Q") + 1] == "celery"


def test_postgres_allows_a_connection_per_worker_process_and_web_thread():
    postgres = _services("docker-compose.scale.yml")["postgres"]
    settings = dict(part.split("=", 1) for part in postgres["command"].split() if "=" in part)
    # 64 web threads (config/gunicorn.py's ceiling) + workers + beat, with room.
    assert int(settings["max_connections"]) >= 64 + 16 + 1
