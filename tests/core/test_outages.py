"""Outages users can live with: /healthz names what is down, pages answer the outage page and the
API its 503 error body while PostgreSQL or Redis is down, and both recover by themselves.

The database that is stopped here is a private throwaway cluster (tests/outages.py) holding a copy
of the test database; the broker is a private redis-server. The shared servers on 5432 and 6379
are never touched.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from django.test import Client

from apps.core import health
from tests.outages import PrivateRedis, served_by_private_cluster


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server")
    server = PrivateRedis()
    server.start()
    yield server
    server.stop()


def test_healthz_answers_200_and_each_dependencys_status_when_both_answer(db, client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["down"] == []
    assert body["checks"]["database"]["status"] == "ok"
    assert body["checks"]["broker"]["status"] == "ok"


def test_healthz_answers_503_naming_the_broker_while_redis_is_down_and_200_once_it_is_back(
    db, client, settings, private_redis
):
    settings.CELERY_BROKER_URL = private_redis.url
    assert client.get("/healthz").status_code == 200
    private_redis.stop()
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["down"] == ["broker"]
    assert body["checks"]["database"]["status"] == "ok"
    assert body["checks"]["broker"]["status"] == "down" and body["checks"]["broker"]["error"]
    assert body["checks"]["broker"]["ms"] < 2000, "a short timeout, not TCP's"
    private_redis.start()
    assert client.get("/healthz").status_code == 200


def test_an_error_that_is_not_an_outage_is_not_called_one():
    from django.db import IntegrityError, OperationalError

    assert health.outage_of(IntegrityError("duplicate key")) is None
    assert health.outage_of(ValueError("bad")) is None
    deadlock = OperationalError("deadlock detected")
    deadlock.__cause__ = type("Deadlock", (Exception,), {"sqlstate": "40P01"})()
    assert health.outage_of(deadlock) is None
    assert health.outage_of(OperationalError("connection refused")) == "database"


@pytest.mark.django_db(transaction=True)
def test_while_postgresql_is_down_pages_api_and_sign_ins_answer_503_and_recover_by_themselves(
    reviewer, idea, password
):
    client = Client(raise_request_exception=False)
    with served_by_private_cluster() as cluster:
        client.force_login(reviewer)
        assert client.get("/screening/").status_code == 200
        assert client.get("/api/ideas/").status_code == 200

        cluster.stop()
        page = client.get("/screening/")
        assert page.status_code == 503
        assert page["Retry-After"] and page["X-Unavailable"] == "database"
        html = page.content.decode()
        assert "Back in a moment" in html and "the database (PostgreSQL)" in html
        assert 'http-equiv="refresh"' in html, "a GET's outage page tries again by itself"

        api = client.get("/api/ideas/")
        assert api.status_code == 503
        assert api["Content-Type"] == "application/json"
        assert api["Retry-After"] == "5" and api["X-Unavailable"] == "database"
        assert api.json() == {
            "detail": health.unavailable_message("database"),
            "errors": [
                {
                    "field": "database",
                    "message": "unreachable; try again in a few seconds",
                    "row": None,
                    "value": None,
                }
            ],
        }
        token = Client(raise_request_exception=False).post(
            "/api/auth/token/", {"username": reviewer.username, "password": password}
        )
        assert token.status_code == 503 and token.json()["errors"][0]["field"] == "database"

        sign_in = Client(raise_request_exception=False).post(
            "/accounts/login/", {"username": reviewer.username, "password": password}
        )
        assert sign_in.status_code == 503
        assert "may not have been saved" in sign_in.content.decode()
        assert 'http-equiv="refresh"' not in sign_in.content.decode(), "a POST is not repeated"

        healthz = client.get("/healthz")
        assert healthz.status_code == 503
        assert healthz.json()["down"] == ["database"]
        assert healthz.json()["checks"]["broker"]["status"] == "ok"

        cluster.start()
        assert client.get("/healthz").status_code == 200
        assert client.get("/screening/").status_code == 200
        assert client.get("/api/ideas/").status_code == 200
        signed_in = Client().post(
            "/accounts/login/", {"username": reviewer.username, "password": password}
        )
        assert signed_in.status_code == 302


def test_a_page_that_needs_redis_answers_503_naming_it_while_redis_is_down(
    db, settings, private_redis, reviewer
):
    """The password reset counts requests in the Redis cache: with Redis down, the outage page
    names the broker (Redis) instead of a 500; other pages keep working without it."""
    from config.settings.base import cache_settings

    settings.CACHES = cache_settings(private_redis.url)
    client = Client(raise_request_exception=False)
    private_redis.stop()
    response = client.post("/accounts/password-reset/", {"email": reviewer.email})
    assert response.status_code == 503
    assert response["X-Unavailable"] == "broker"
    assert "the task queue (Redis)" in response.content.decode()
    assert client.get("/accounts/login/").status_code == 200, "a page without Redis still works"
    private_redis.start()
    after = client.post("/accounts/password-reset/", {"email": reviewer.email})
    assert after.status_code == 302
