"""Shared fixtures: named personas, a small catalog, and a real headless browser."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from apps.accounts.models import User
from tests.factories import (
    PASSWORD,
    AssignmentFactory,
    DomainFactory,
    IdeaFactory,
    ReviewerFactory,
    UserFactory,
)


def _transactional(node: pytest.Item, fixtures: list[str]) -> bool:
    """Whether a test commits to the database (`transaction=True`, a live server or a worker)."""
    marker = node.get_closest_marker("django_db")
    return bool(marker is not None and marker.kwargs.get("transaction")) or (
        "transactional_db" in fixtures or "live_server" in fixtures
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every transactional test restores the migrated rows (serialized_rollback).

    A transactional test's flush re-creates content types and permissions with new ids unless
    the test is serialized; a serialized test after it then reloads the original ids and fails
    on the duplicate (app_label, model). Whether it failed depended on the order of the files.
    Serializing all of them keeps every flush the same.

    Under bin/test's `--dist loadgroup` a file's tests stay in one process (its module-scoped
    worker starts once), and the llm tests all go to one process, which alone starts the local
    LLM server."""
    for item in items:
        group = "llm" if item.get_closest_marker("llm") else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))
        fixtures = getattr(item, "fixturenames", [])
        if _transactional(item, fixtures) and "django_db_serialized_rollback" not in fixtures:
            fixtures.append("django_db_serialized_rollback")


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The test database as pytest-django sets it up, with transactional tests reset by deleting
    and copying rows back rather than TRUNCATE and one save per row (tests/db_reset.py)."""
    from tests.db_reset import copy_migrated_rows, fast_transactional_reset

    with django_db_blocker.unblock():
        migrated = copy_migrated_rows()
    with fast_transactional_reset(migrated):
        yield


@pytest.fixture(autouse=True)
def _default_rubric(request):
    """Transactional tests flush every table, including the PBIG rubric that a data migration
    loads; put it back so each test starts from what a migrated database holds."""
    uses_db = request.node.get_closest_marker("django_db") or any(
        name in request.fixturenames for name in ("db", "transactional_db", "live_server")
    )
    if not uses_db:
        return
    request.getfixturevalue("_django_db_helper")
    from pathlib import Path

    from apps.screening import rubric_files
    from apps.screening.models import Dimension, Rubric

    if Rubric.objects.filter(is_default=True).exists():
        return
    pbig = Path(rubric_files.__file__).parent / "rubrics" / "pbig.yaml"
    spec = rubric_files.parse_rubric(rubric_files.load_rubric_text(pbig.read_text()))
    rubric_files.save_rubric(
        spec, rubric_model=Rubric, dimension_model=Dimension, make_default=True
    )


@pytest.fixture(autouse=True)
def _ids_whatever_ran_before(request):
    """A transactional test starts with every table's id sequence just after its largest id, so
    its rows get the same ids whichever tests its process ran before (a flush deletes rows but
    leaves the sequences where they were). Under bin/test's processes the files a process runs
    change from run to run, and what the demo's offline judges predict depends on the rows' ids:
    tests/judges/test_browser.py's tour passed or failed with the sequences' offset."""
    if not _transactional(request.node, request.fixturenames):
        return
    request.getfixturevalue("_django_db_helper")
    from django.apps import apps
    from django.core.management.color import no_style
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    statements = connection.ops.sequence_reset_sql(no_style(), apps.get_models())
    if statements:
        with connection.cursor() as cursor:
            cursor.execute(" ".join(statements))


@pytest.fixture(autouse=True)
def _fresh_throttles(settings):
    """Throttle counters and the judges' keys live in the shared Redis cache: each test has its
    own prefix."""
    import uuid

    settings.PASSWORD_RESET_THROTTLE_PREFIX = f"pwreset-{uuid.uuid4().hex}"
    # The judges' burst markers and history gaps live there too.
    settings.JUDGE_CACHE_PREFIX = f"judges-{uuid.uuid4().hex}"


@pytest.fixture
def domain(db):
    return DomainFactory(key="nlp", name="NLP")


@pytest.fixture
def other_domain(db):
    return DomainFactory(key="materials", name="Materials Chemistry")


@pytest.fixture
def idea(domain):
    return IdeaFactory(patent__domain=domain)


@pytest.fixture
def admin(db) -> User:
    """Imports data, assigns reviewers, configures and starts judges."""
    return UserFactory(username="ada", role=User.Role.ADMIN, first_name="Ada")


@pytest.fixture
def manager(db) -> User:
    """Reads every rating and dashboard; edits nothing."""
    return UserFactory(username="mona", role=User.Role.MANAGER, first_name="Mona")


@pytest.fixture
def reviewer(domain, idea) -> User:
    """A reviewer of the NLP domain, assigned `idea`; sees only their own ratings."""
    user = ReviewerFactory(username="rita", first_name="Rita", profile=[domain])
    AssignmentFactory(reviewer=user, idea=idea)
    return user


@pytest.fixture
def other_reviewer(domain, idea) -> User:
    """Another NLP reviewer assigned the same idea; their scores stay hidden from `reviewer`."""
    user = ReviewerFactory(username="otto", first_name="Otto", profile=[domain])
    AssignmentFactory(reviewer=user, idea=idea)
    return user


@pytest.fixture
def outsider(other_domain) -> User:
    """A reviewer of another domain with no assignments: sees nothing of NLP."""
    return ReviewerFactory(username="oscar", first_name="Oscar", profile=[other_domain])


@pytest.fixture
def password() -> str:
    return PASSWORD


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    # Playwright's sync API runs an event loop in this thread; the live server's ORM calls are
    # in other threads, so Django's async-safety guard would otherwise refuse test-side queries.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import expect, sync_playwright

    # Assertions wait as long as actions do (the page fixture's 10 s): Playwright's own 5 s
    # was once too short for a save's redirect while the suite's workers shared the two cores.
    expect.set_options(timeout=10_000)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    # Every browser test also checks the Content-Security-Policy: Chromium reports a refused
    # inline script, style or eval on the console (issue 21.9).
    refused: list[str] = []
    page.on(
        "console",
        lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None,
    )
    yield page
    context.close()
    assert refused == [], refused


@pytest.fixture
def login(page, password):
    """Sign a user in through the real login form."""

    def _login(user: User) -> None:
        page.goto("/accounts/login/")
        page.fill("input[name=username]", user.username)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_load_state("networkidle")

    return _login


@pytest.fixture(scope="session")
def llm_server() -> Iterator[object]:
    """The real local LLM server for the ``llm`` tests, one for the whole session. Defined here
    rather than in each llm folder's conftest: a fixture defined (or imported) in two conftests
    is two fixtures, and each started its own server.

    Without the llm extra these tests are skipped on a developer's machine, saying how to
    install it; under bin/test (PLURALIST_LLM_TESTS=require) or in CI they fail instead, so a
    missing build can never pass as a green run."""
    from apps.llm_server.server import LLMServerUnavailable, LocalLLMServer, require_packages

    try:
        require_packages()
    except LLMServerUnavailable as exc:
        if os.environ.get("PLURALIST_LLM_TESTS") == "require" or os.environ.get("CI"):
            pytest.fail(f"llm tests are required here but cannot run: {exc}", pytrace=False)
        pytest.skip(str(exc))
    server = LocalLLMServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def celery_worker(django_db_setup, django_db_blocker):
    """A real worker on the test database for one test module, stopped after it so later tests
    that count queued messages see them. Tests using it need `transactional_db` (or
    `live_server`) so that their writes are visible to it."""
    from tests.workers import CeleryWorker, purge_queue

    purge_queue()
    worker = CeleryWorker().start()
    yield worker
    worker.stop()
