"""Planner statistics kept fresh after bulk writes (PostgreSQL).

PostgreSQL plans a query from each table's statistics, which ANALYZE gathers; autovacuum
runs it once a table has changed by more than autovacuum_analyze_threshold rows plus
autovacuum_analyze_scale_factor of its size, but only on its next pass (a minute apart by
default), and never where it is turned off. A bulk write that grows a table from nothing, such
as an import of a thousand reviewers or the first judge refresh after it, is followed at once
by queries planned for the empty table: the alignment's reading of a domain's ratings joined
the users by a nested loop planned for 84 users, not 981, and took 0.7 s for 7,144 rows
(bench/bench_scale.py at a million ratings, autovacuum off). So the writers call
``analyze_stale`` after their commit: it applies autovacuum's own rule, with the server's own
settings (not a table's own autovacuum options), to the tables they wrote, and analyzes the
ones that qualify now rather than later.

Like autovacuum, a table is analyzed at most once per autovacuum_naptime (a minute by
default; settings.TABLE_ANALYZE_INTERVAL_SECONDS overrides it), unless it has changed by more
rows than its statistics describe (it more than doubled, or they were taken on an empty table):
a refresh finishing a run a second would otherwise analyze its growing tables after nearly
every run (17 % of a 10x refresh in one process, 2026-12-04). The count of ANALYZEs then grows
with the minutes and the table's doublings, not with the runs.

ANALYZE reads a sample (300 x default_statistics_target rows), so its cost does not grow with
the table; the check is one query on the statistics views. A table another session is
analyzing is skipped (an advisory lock), not waited for. A failure is logged, never raised: the
writes it follows are saved. (A role that does not own a table gets PostgreSQL's own warning
and that table stays to autovacuum.)
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Iterable

from django.conf import settings
from django.db import DatabaseError, connection, models, transaction

logger = logging.getLogger(__name__)

# Changed rows past autovacuum's own threshold, per table (reltuples is -1 before the first
# ANALYZE: then every change counts); and either more changed rows than the statistics describe
# or none taken (by anyone) within the interval (%s seconds; NULL: the server's naptime).
_STALE = """
SELECT s.relname
FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
WHERE s.schemaname = current_schema() AND s.relname = ANY(%s)
  AND s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float
      + current_setting('autovacuum_analyze_scale_factor')::float * GREATEST(c.reltuples, 0)
  AND (s.n_mod_since_analyze > GREATEST(c.reltuples, 0)
       OR COALESCE(GREATEST(s.last_analyze, s.last_autoanalyze), '-infinity') < now()
          - COALESCE(make_interval(secs => %s), current_setting('autovacuum_naptime')::interval))
ORDER BY s.relname
"""


def analyze_stale(tables: Iterable[type[models.Model]]) -> list[str]:
    """ANALYZE those of these models' tables that autovacuum would analyze now (its threshold
    and its interval, above); returns their names (none on a database other than PostgreSQL).
    Call it after the writes' commit."""
    if connection.vendor != "postgresql":
        return []
    names = sorted({model._meta.db_table for model in tables})
    analyzed: list[str] = []
    try:
        if not connection.in_atomic_block and getattr(connection, "pg_version", 0) >= 150000:
            # A session's counts reach the statistics views when it goes idle, at most once a
            # second: the writes just committed could still be missing from them.
            with connection.cursor() as cur:
                cur.execute("SELECT pg_stat_force_next_flush()")
        # One transaction (a savepoint inside the caller's): a failure leaves the caller's
        # transaction usable, and the advisory locks are held until the statistics are stored.
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute(_STALE, [names, settings.TABLE_ANALYZE_INTERVAL_SECONDS])
            for (name,) in cur.fetchall():
                # Another worker analyzing the same table would make this one queue behind it
                # for the same statistics: skip it instead.
                cur.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [_LOCK, _key(name)])
                if cur.fetchone()[0]:
                    cur.execute(f"ANALYZE {connection.ops.quote_name(name)}")
                    analyzed.append(name)
    except DatabaseError as exc:  # e.g. a statement timeout: the statistics stay as they were
        analyzed = []
        logger.warning("could not refresh the statistics of %s: %s", ", ".join(names), exc)
    if analyzed:
        logger.info("analyzed %s", ", ".join(analyzed))
    return analyzed


# The advisory locks' first key: this module's, so they meet no other lock of the product.
_LOCK = zlib.crc32(b"pluralist.table_statistics") & 0x7FFFFFFF


def _key(table: str) -> int:
    return zlib.crc32(table.encode()) & 0x7FFFFFFF
