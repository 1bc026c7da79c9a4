"""Fixtures for panel tests: the fake LLM server as the configured endpoint, and a domain where
three reviewers rated six ideas on innovativeness (1-5)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from apps.panels.models import Persona
from tests.factories import ReviewerFactory
from tests.fake_llm import FakeLLM
from tests.judges import broker as broker_module
from tests.judges.helpers import make_ideas, rate

DIMENSION = "innovativeness"
# Reviewer i's score of idea j: spread so the reviewers' mean varies across ideas.
HUMAN_SCORES = {0: [1, 2, 3, 4, 5, 3], 1: [2, 2, 3, 5, 5, 2], 2: [1, 3, 4, 4, 5, 3]}


def scripted(score_of: Callable[[str, int | None], int]) -> Callable[[dict[str, Any]], str]:
    """A fake-server reply function: score_of(persona name or "", debate round or None)."""

    def reply(body: dict[str, Any]) -> str:
        messages = body.get("messages", [])
        system = messages[0]["content"] if messages else ""
        name = re.match(r"You are (.+?)\. ", system)
        persona = name.group(1) if name and "expert reviewer" not in system else ""
        rounds = re.findall(r"## Debate, round (\d+)", messages[-1]["content"]) if messages else []
        if "summarise a review panel" in system:
            return json.dumps({"score": 3, "confidence": 80, "reason": "They mostly agree."})
        score = score_of(persona, int(rounds[-1]) if rounds else None)
        return json.dumps(
            {"score": score, "confidence": 90, "reason": f"{persona or 'judge'} view"}
        )

    return reply


@pytest.fixture
def llm(settings) -> Iterator[Callable[..., FakeLLM]]:
    """Start a fake server (optionally with a reply function) and make it the LLM endpoint."""
    servers: list[FakeLLM] = []

    def start(reply: Callable[[dict[str, Any]], str] | None = None) -> FakeLLM:
        server = FakeLLM(default_reply=reply).start()
        servers.append(server)
        settings.LLM_BASE_URL = server.base_url
        settings.LLM_MODEL = "fake-model"
        settings.LLM_MAX_RETRIES = 0
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def broker():
    """The test Redis broker, emptied before and after: `broker.sent()` lists what was sent."""
    broker_module.purge()
    yield broker_module
    broker_module.purge()


@pytest.fixture
def rated(domain):
    """Three reviewers, six ideas, scores from HUMAN_SCORES. Returns (reviewers, ideas)."""
    ideas = make_ideas(domain, 6)
    reviewers = [
        ReviewerFactory(username=f"rev{i}", profile=[domain]) for i in range(len(HUMAN_SCORES))
    ]
    for i, reviewer in enumerate(reviewers):
        rate(reviewer, ideas, DIMENSION, lambda j, i=i: HUMAN_SCORES[i][j])
    return reviewers, ideas


def make_personas(domain, names: list[str], source: str = Persona.Source.INVENTED) -> list[Persona]:
    return [
        Persona.objects.create(
            domain=domain, source=source, name=name, description=f"{name} cares about novelty."
        )
        for name in names
    ]
