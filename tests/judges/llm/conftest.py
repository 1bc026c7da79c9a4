"""The llm tests: the real local LLM server (llama-cpp-python serving Gemma 3 270M) is started
once a session by `llm_server` in tests/conftest.py.

Tests here carry the ``llm`` marker. Without the llm extra they are skipped on a developer's
machine, saying how to install it; under bin/test (PLURALIST_LLM_TESTS=require) or in CI they
fail instead, so a missing build can never pass as a green run.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _forget_response_formats():
    from apps.judges.backends.openai import forget_endpoints

    forget_endpoints()
    yield
