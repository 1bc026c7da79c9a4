"""A faster reset between transactional tests on PostgreSQL, with the same end state.

A transactional test (live server, worker, `transaction=True`) ends with Django's flush, a
TRUNCATE of every table, and the next one starts by re-saving the migrated rows (content types,
permissions, the PBIG rubric) one `Model.save()` at a time from `_test_serialized_contents`
(tests/conftest.py serializes every transactional test). On this project's 58 tables that is
about a thousand statements and a TRUNCATE that PostgreSQL pays for per table, empty or not:
seconds per test on a loaded machine. Here the flush deletes the rows instead (one round trip;
the foreign keys are deferred, so the order does not matter, and sequences are left alone as
TRUNCATE without RESTART IDENTITY leaves them), and the migrated rows are copied back with COPY
from a copy taken right after the test database was migrated, which is what the serialized
contents hold too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import IntegrityError, connections, transaction
from django.db.backends.postgresql.creation import DatabaseCreation
from django.db.backends.postgresql.operations import DatabaseOperations


def _table_names(connection) -> list[str]:
    return sorted(connection.introspection.django_table_names(only_existing=True))


def _copy_out(connection) -> dict[str, bytes]:
    """Every non-empty table's rows in COPY's text format."""
    rows: dict[str, bytes] = {}
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for table in _table_names(connection):
            cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {quote(table)})")
            if not cursor.fetchone()[0]:
                continue
            with cursor.cursor.copy(f"COPY {quote(table)} TO STDOUT") as copy:
                rows[table] = b"".join(bytes(chunk) for chunk in copy)
    return rows


def copy_migrated_rows(alias: str = "default") -> dict[str, bytes] | None:
    """The migrated rows, to take right after the test database is set up; None off PostgreSQL
    (another database keeps Django's own reset)."""
    connection = connections[alias]
    return _copy_out(connection) if connection.vendor == "postgresql" else None


@contextmanager
def fast_transactional_reset(migrated: dict[str, bytes] | None) -> Iterator[None]:
    """Within the block, flushes delete and the serialized rollback copies `migrated` back."""
    if migrated is None:
        yield
        return
    original_flush = DatabaseOperations.sql_flush
    original_execute = DatabaseOperations.execute_sql_flush
    original_restore = DatabaseCreation.deserialize_db_from_string

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade or not tables:
            return original_flush(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        deletes = " ".join(f"DELETE FROM {self.quote_name(table)};" for table in tables)
        return [f"SET CONSTRAINTS ALL DEFERRED; {deletes}"]

    def execute_sql_flush(self, sql_list):
        # The deletes see what was committed when each began, so a row a worker commits
        # meanwhile (a module's worker can still be finishing a task of the test that ended)
        # may reference one deleted after it: the deferred check then fails the flush at
        # COMMIT. Deleting again removes the late rows too.
        for attempt in range(3):
            try:
                return original_execute(self, sql_list)
            except IntegrityError:
                if attempt == 2:
                    raise

    def deserialize_db_from_string(self, data):
        if data is not getattr(self.connection, "_test_serialized_contents", None):
            return original_restore(self, data)
        quote = self.connection.ops.quote_name
        with self.connection.cursor() as cursor:
            cursor.execute(
                "SELECT " + " OR ".join(f"EXISTS (SELECT 1 FROM {quote(t)})" for t in migrated)
            )
            if cursor.fetchone()[0]:
                # Not after a flush (the session's first transactional test): Django's restore
                # overwrites rows that are there already.
                return original_restore(self, data)
        # One transaction: the foreign keys are checked at its end, whatever the tables' order.
        with transaction.atomic(using=self.connection.alias), self.connection.cursor() as cursor:
            for table, content in migrated.items():
                with cursor.cursor.copy(f"COPY {quote(table)} FROM STDIN") as copy:
                    copy.write(content)

    DatabaseOperations.sql_flush = sql_flush  # type: ignore[method-assign]
    DatabaseOperations.execute_sql_flush = execute_sql_flush  # type: ignore[method-assign]
    DatabaseCreation.deserialize_db_from_string = deserialize_db_from_string  # type: ignore[method-assign]
    try:
        yield
    finally:
        DatabaseOperations.sql_flush = original_flush  # type: ignore[method-assign]
        DatabaseOperations.execute_sql_flush = original_execute  # type: ignore[method-assign]
        DatabaseCreation.deserialize_db_from_string = original_restore  # type: ignore[method-assign]
