"""The real local LLM server (llama-cpp-python serving Gemma 3 270M), started once a session.

Tests here carry the ``llm`` marker. Without the llm extra they are skipped on a developer's
machine, saying how to install it; under bin/test (PLURALIST_LLM_TESTS=require) or in CI they
fail instead, so a missing build can never pass as a green run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from apps.llm_server.server import LLMServerUnavailable, LocalLLMServer, require_packages


def _must_run() -> bool:
    return os.environ.get("PLURALIST_LLM_TESTS") == "require" or bool(os.environ.get("CI"))


@pytest.fixture(scope="session")
def llm_server() -> Iterator[LocalLLMServer]:
    try:
        require_packages()
    except LLMServerUnavailable as exc:
        if _must_run():
            pytest.fail(f"llm tests are required here but cannot run: {exc}", pytrace=False)
        pytest.skip(str(exc))
    server = LocalLLMServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _forget_response_formats():
    from apps.judges.backends.openai import forget_endpoints

    forget_endpoints()
    yield
