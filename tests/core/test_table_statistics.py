"""Planner statistics refreshed after bulk writes, by autovacuum's rule (real PostgreSQL)."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection

from apps.catalog.models import Patent
from apps.core import table_statistics
from apps.dataio.services.imports import import_file

pytestmark = pytest.mark.django_db(transaction=True)

TABLE = Patent._meta.db_table


@pytest.fixture(autouse=True)
def _analyzed_empty(db):
    """Each test starts from statistics of the empty table: those an earlier test left behind
    (its rows flushed since) would move the threshold."""
    with connection.cursor() as cur:
        cur.execute(f"ANALYZE {TABLE}")


def planned_rows() -> float:
    """What the planner believes the table holds (-1: never analyzed)."""
    with connection.cursor() as cur:
        cur.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [TABLE])
        return float(cur.fetchone()[0])


def patents_csv(n: int, start: int = 0) -> bytes:
    lines = ["external_id,domain,domain_name,title,abstract,claims"]
    lines += [
        f"US9{i:07d},nlp,NLP,Patent {i},An abstract about method {i}.,1. A method {i}."
        for i in range(start, start + n)
    ]
    return ("\n".join(lines) + "\n").encode()


def test_an_import_that_grows_a_table_leaves_it_analyzed(domain):
    assert planned_rows() == 0
    import_file(kind="patents", content=patents_csv(300), filename="patents.csv")
    assert planned_rows() == Patent.objects.count() == 300
    assert table_statistics.analyze_stale([Patent]) == []  # nothing left to do


def test_a_table_is_analyzed_when_autovacuum_would_and_not_before(domain, settings):
    # Autovacuum's threshold alone: its interval is the next test's.
    settings.TABLE_ANALYZE_INTERVAL_SECONDS = 0
    import_file(kind="patents", content=patents_csv(300), filename="patents.csv")
    assert planned_rows() == 300
    # 50 rows + 10 % of 300 is autovacuum's default threshold (the server's own settings
    # are read): 40 more rows stay under it, 60 more go past it.
    import_file(kind="patents", content=patents_csv(40, start=300), filename="patents.csv")
    assert table_statistics.analyze_stale([Patent]) == []
    assert planned_rows() == 300
    import_file(kind="patents", content=patents_csv(60, start=340), filename="patents.csv")
    assert planned_rows() == 400
    assert table_statistics.analyze_stale([Patent]) == []  # nothing changed since


def test_a_table_analyzed_within_the_interval_waits_unless_it_more_than_doubled(domain):
    # The server's interval (autovacuum_naptime, a minute by default): well past this test.
    import_file(kind="patents", content=patents_csv(300), filename="patents.csv")
    assert planned_rows() == 300
    # Past the threshold (50 + 10 % of 300), analyzed a moment ago: left for later.
    import_file(kind="patents", content=patents_csv(100, start=300), filename="patents.csv")
    assert planned_rows() == 300
    # More changed rows than the statistics describe (350 > 300): analyzed now.
    import_file(kind="patents", content=patents_csv(250, start=400), filename="patents.csv")
    assert planned_rows() == 650


def test_a_table_another_session_is_analyzing_is_skipped_not_waited_for(domain):
    Patent.objects.bulk_create(
        [Patent(external_id=f"P{i}", domain=domain, title=f"Patent {i}") for i in range(200)]
    )
    settings = connection.settings_dict
    other = psycopg.connect(
        host=settings["HOST"],
        port=settings["PORT"],
        user=settings["USER"],
        dbname=settings["NAME"],
        autocommit=True,
    )
    try:
        other.execute(
            "SELECT pg_advisory_lock(%s, %s)",
            [table_statistics._LOCK, table_statistics._key(TABLE)],
        )
        assert table_statistics.analyze_stale([Patent]) == []
        assert planned_rows() == 0
    finally:
        other.close()  # its lock goes with it
    assert table_statistics.analyze_stale([Patent]) == [TABLE]
    assert planned_rows() == 200
