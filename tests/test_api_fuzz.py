"""Schemathesis over the whole OpenAPI schema, as served: every operation gets generated input
(boundary values such as huge integers and NUL characters, wrong types, random bodies) from each
role's token and from an anonymous caller, against a live server on PostgreSQL. Every answer
must be no server error and exactly what the schema documents: status code, content type,
headers and body.

Generic over the schema: an endpoint is fuzzed as soon as it is in /api/schema/. Bounded in
examples (PLURALIST_FUZZ_EXAMPLES per operation in the fuzzing phase, default 5, after the coverage
phase's boundary values) and in time (each role's run must end within PLURALIST_FUZZ_SECONDS,
default 300; about a minute each on a quiet machine). Data are generated valid for the schema
("positive"): the point is that valid-looking input never breaks the server or the contract.
DELETE /api/auth/token/ is left out: it revokes the very token the run uses (it has its own
tests in tests/accounts/test_login_hardening.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rest_framework.authtoken.models import Token

from tests.workers import purge_queue

EXAMPLES = int(os.environ.get("PLURALIST_FUZZ_EXAMPLES", "5"))
SECONDS = int(os.environ.get("PLURALIST_FUZZ_SECONDS", "300"))
CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
    ]
)
ST = Path(sys.executable).with_name("st")


@pytest.fixture
def role_headers(reviewer, other_reviewer, manager, admin, idea) -> dict[str, list[str]]:
    """One token per role (the reviewer is assigned `idea`), plus an anonymous caller."""
    headers: dict[str, list[str]] = {"anonymous": []}
    for user in (reviewer, manager, admin):
        token = Token.objects.create(user=user)
        headers[user.role] = ["-H", f"Authorization: Token {token.key}"]
    return headers


@pytest.fixture(autouse=True)
def _purge_queued_tasks():
    """Fuzzed writes queue judge and metrics tasks; leave no stale message for later tests."""
    yield
    purge_queue()


@pytest.mark.parametrize("role", ["anonymous", "reviewer", "manager", "admin"])
def test_it_answers_every_operation_as_the_schema_says(live_server, role_headers, role, tmp_path):
    command = [
        str(ST),
        "run",
        f"{live_server.url}/api/schema/?format=json",
        *role_headers[role],
        "--exclude-operation-id",
        "auth_token_destroy",
        "--checks",
        CHECKS,
        "--phases",
        "examples,coverage,fuzzing",
        "--mode",
        "positive",
        "--max-examples",
        str(EXAMPLES),
        "--seed",
        "20261122",
        "--workers",
        "2",
        # Django's test live server now and then drops a kept-alive connection (a network error,
        # not an answer); retry such a request instead of failing the run. Every answer that does
        # come back is still checked.
        "--request-retries",
        "2",
        "--continue-on-failure",
        "--suppress-health-check",
        "all",
        "--no-color",
    ]
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=SECONDS, cwd=tmp_path, check=False
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-12000:]
    assert " passed" in output and "failed" not in output.split("Test cases:")[-1], output[-3000:]
