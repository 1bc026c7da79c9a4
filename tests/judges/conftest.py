"""Fixtures for judge tests.

Top part (judges core): `fake_llm`, a real HTTP server speaking the OpenAI wire format
(tests/fake_llm.py), the only stand-in allowed, since the LLM is a paid outside service.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fake_llm import FakeLLM


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A fresh fake OpenAI-compatible server per test; `fake_llm.base_url` ends in /v1."""
    server = FakeLLM().start()
    try:
        yield server
    finally:
        server.stop()


# --- judges Django side (H8) below ------------------------------------------------------------


@pytest.fixture
def two_reviewers_history(domain):
    """Rita and Otto each scored 12 NLP ideas on innovativeness on opposite halves of the scale;
    two more ideas are unrated. Returns (rita, otto, ideas)."""
    from tests.factories import ReviewerFactory
    from tests.judges.helpers import make_ideas, rate

    ideas = make_ideas(domain, 14)
    rita = ReviewerFactory(username="rita", first_name="Rita", profile=[domain])
    otto = ReviewerFactory(username="otto", first_name="Otto", profile=[domain])
    rate(rita, ideas[:12], "innovativeness", lambda i: 1 + (i % 4) // 2)
    rate(otto, ideas[:12], "innovativeness", lambda i: 4 + (i % 4) // 2)
    return rita, otto, ideas
