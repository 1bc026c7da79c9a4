"""Helpers for the screening page tests: field names of the staged form, signed-in clients."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

# A complete PBIG screening in the form's field names: every stage open, advantage = 3.
FULL_FORM = {
    "score-specificity": "4",
    "score-technical_validity": "3",
    "score-innovativeness": "2",
    "answer-competitive_advantage-hard_to_imitate": "yes",
    "answer-competitive_advantage-technology_essential": "no",
    "score-need_validity": "2",
    "score-market_size": "1",
}


def rate_url(idea: Any) -> str:
    return reverse("screening:rate", kwargs={"idea_id": idea.id})


def post_form(
    client: Client, idea: Any, data: dict[str, str], *, action: str = "submit", htmx: bool = False
):  # type: ignore[no-untyped-def]
    payload = dict(data)
    if action:
        payload["action"] = action
    headers = {"HX-Request": "true"} if htmx else {}
    return client.post(rate_url(idea), payload, headers=headers)


@pytest.fixture
def client_of(client: Client):  # type: ignore[no-untyped-def]
    """A test client signed in as the given user."""

    def _client_of(user: Any) -> Client:
        client.force_login(user)
        return client

    return _client_of


@pytest.fixture
def pbig_rubric(transactional_db):  # type: ignore[no-untyped-def]
    """The default PBIG rubric, reloaded when an earlier transactional test flushed it away.

    The rubric normally comes from migration screening.0002; transactional tests (live server,
    threads) empty every table when they finish, including the migration's rows.
    """
    from apps.screening.models import Dimension, Rubric
    from apps.screening.rubric_files import load_rubric_text, parse_rubric, save_rubric

    rubric = Rubric.objects.filter(is_default=True).first()
    if rubric is None:
        from pathlib import Path

        import apps.screening as screening

        text = (Path(screening.__file__).parent / "rubrics" / "pbig.yaml").read_text(
            encoding="utf-8"
        )
        rubric = save_rubric(
            parse_rubric(load_rubric_text(text)),
            rubric_model=Rubric,
            dimension_model=Dimension,
            make_default=True,
        )
    return rubric
