"""Fixtures for the import tests: the documented example files and a snapshot of table counts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from apps.accounts.models import ReviewerProfile, User
from apps.catalog.models import Domain, Idea, Patent
from apps.dataio.services.imports import ImportResult, import_file
from apps.screening.models import Assignment, Dimension, Rating, RatingHistory, Rubric

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def example(name: str) -> bytes:
    return (EXAMPLES / name).read_bytes()


def table_counts() -> dict[str, int]:
    """Row counts of every table an import may write; equal before/after means nothing changed."""
    models = [
        Domain,
        Patent,
        Idea,
        User,
        ReviewerProfile,
        Rubric,
        Dimension,
        Rating,
        RatingHistory,
        Assignment,
    ]
    return {m.__name__: m.objects.count() for m in models}


@pytest.fixture
def run_import() -> Callable[..., ImportResult]:
    def _run(kind: str, content: bytes | str, filename: str, **kwargs: object) -> ImportResult:
        data = content.encode("utf-8") if isinstance(content, str) else content
        return import_file(kind=kind, content=data, filename=filename, **kwargs)

    return _run


@pytest.fixture
def catalog(db) -> None:
    """The example patents and ideas (and their domains) are stored."""
    import_file(kind="patents", content=example("patents.csv"), filename="patents.csv")
    import_file(kind="ideas", content=example("ideas.csv"), filename="ideas.csv")


@pytest.fixture
def examples_loaded(catalog) -> None:
    """Everything in docs/examples is stored, ratings included."""
    import_file(kind="reviewers", content=example("reviewers.csv"), filename="reviewers.csv")
    import_file(kind="ratings", content=example("ratings.csv"), filename="ratings.csv")


@pytest.fixture
def reviewer_alice(catalog) -> User:
    """The example reviewer alice (NLP and materials), imported from docs/examples/reviewers.csv."""
    import_file(kind="reviewers", content=example("reviewers.csv"), filename="reviewers.csv")
    return User.objects.get(username="alice")


# Every carried table with rows, for the archive tests (tests/catalog/archive_fixtures.py).
from tests.dataio.archive_fixtures import busy_installation  # noqa: E402, F401
