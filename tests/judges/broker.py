"""Reads the messages waiting in the test Redis broker: what the code under test really sent.

Tests assert on these instead of patching the code that sends them. Kombu's Redis transport
LPUSHes each message on a list named after the queue (consumers BRPOP), so the oldest message
is the last element.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import redis
from django.conf import settings

QUEUES = ("celery", "judges")


@dataclass(frozen=True)
class Sent:
    task: str
    args: list[Any]
    kwargs: dict[str, Any]
    queue: str
    eta: str | None


def _client() -> redis.Redis:
    return redis.Redis.from_url(settings.CELERY_BROKER_URL)


def purge() -> None:
    _client().delete(*QUEUES)


def sent(task: str | None = None) -> list[Sent]:
    """Messages waiting in the test queues, oldest first (optionally of one task)."""
    out = []
    client = _client()
    for queue in QUEUES:
        for raw in reversed(client.lrange(queue, 0, -1)):
            message = json.loads(raw)
            body = json.loads(base64.b64decode(message["body"]))
            headers = message["headers"]
            out.append(Sent(headers["task"], body[0], body[1], queue, headers.get("eta")))
    return [m for m in out if task is None or m.task == task]


def run_ids_sent() -> list[int]:
    return [m.args[0] for m in sent("judges.judge_run_execute")]
