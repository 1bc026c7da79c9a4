"""Writing restored rows as they were, and resolving the archive's natural keys to ids.

Rows are written with raw INSERTs (COPY on PostgreSQL): the ORM would overwrite `auto_now` /
`auto_now_add` times with "now", and a restore must bring the original times back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple, cast

from django.db import DEFAULT_DB_ALIAS, connection, connections, models

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea
from apps.core.errors import ApplicationError, FieldError
from apps.judges.models import JudgeConfig
from apps.screening.models import Dimension, Rubric

INTERRUPTED = "Interrupted by the backup: the restore brings back no work plan; start it again."


# Values of these fields are written as they are: psycopg adapts Python's str, int, float, bool,
# Decimal and aware datetimes itself, and Django's own conversion of each (about 30 calls per
# row through the connection proxy) was most of a restore's time (issue 29).
_AS_THEY_ARE = (
    models.CharField,
    models.TextField,
    models.IntegerField,
    models.BooleanField,
    models.FloatField,
    models.DateTimeField,
    models.ForeignKey,
)
# Tables made only of these columns are COPYed with their types told once (below); a float or
# a boolean read from JSON may come as an int, which psycopg then adapts by value instead.
_TYPED = (
    models.CharField,
    models.TextField,
    models.IntegerField,
    models.DateTimeField,
    models.ForeignKey,
    models.JSONField,
)


def insert_rows(
    model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    """Write rows as given (times included), converting each value as the ORM would.

    On PostgreSQL the rows stream through one COPY (a restore writes 100,000 predictions in
    seconds, holding none of them); `rows` must not query the database while it is consumed.
    Elsewhere (SQLite, the local settings) they are INSERTed in batches."""
    fields = [cast(models.Field, model._meta.get_field(c)) for c in columns]
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(str(f.column)) for f in fields)
    real = connections[DEFAULT_DB_ALIAS]
    n = 0
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            converted = [
                i
                for i, f in enumerate(fields)
                if not isinstance(f, _AS_THEY_ARE) or isinstance(f, models.JSONField)
            ]
            prep = {i: fields[i].get_db_prep_save for i in converted}
            types = cur.cursor.connection.adapters.types
            oids = [types.get(str(f.db_type(connection)).split("(")[0]) for f in fields]
            typed = all(oids) and all(isinstance(f, _TYPED) for f in fields)
            with cur.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                if typed:
                    # Every column's type told once: no per-value lookup of how to write it.
                    copy.set_types([info.oid for info in oids if info])
                for row in rows:
                    values = list(row)
                    for i in converted:
                        values[i] = prep[i](values[i], real)
                    copy.write_row(values)
                    n += 1
            return n
        sql = f"INSERT INTO {table} ({names}) VALUES ({', '.join(['%s'] * len(fields))})"
        every = [f.get_db_prep_save for f in fields]
        batch: list[list[Any]] = []
        for row in rows:
            batch.append([p(v, real) for p, v in zip(every, row, strict=True)])
            if len(batch) >= 5000:
                cur.executemany(sql, batch)
                n, batch = n + len(batch), []
        if batch:
            cur.executemany(sql, batch)
            n += len(batch)
    return n


class IdeaKey(NamedTuple):
    """A restored idea: its id, and the rubric it is rated on."""

    id: int
    rubric_id: int | None


class Keys:
    """Natural keys of the restored installation -> ids, with an error list naming the file."""

    def __init__(self) -> None:
        self.users = dict(User.objects.values_list("username", "id"))
        # A domain without its own rubric is rated on the default rubric.
        default = Rubric.objects.filter(is_default=True).values_list("id", flat=True).first()
        self.ideas = {
            ext: IdeaKey(idea_id, rubric_id or default)
            for ext, idea_id, rubric_id in Idea.objects.values_list(
                "external_id", "id", "patent__domain__rubric_id"
            )
        }
        self.dims: dict[tuple[int | None, str], int] = {
            (rubric_id, key): dim_id
            for rubric_id, key, dim_id in Dimension.objects.values_list("rubric_id", "key", "id")
        }
        self.domains = dict(Domain.objects.values_list("key", "id"))
        self.configs = dict(JudgeConfig.objects.values_list("name", "id"))
        self.errors: list[FieldError] = []

    def miss(self, name: str, column: str, row: int, value: str, what: str) -> None:
        if len(self.errors) < 50:
            self.errors.append(
                FieldError(field=f"{name}: {column}", message=what, row=row, value=value)
            )

    def user(self, name: str, column: str, row: int, value: str, *, required: bool = True) -> Any:
        if not value and not required:
            return None
        found = self.users.get(value)
        if found is None:
            self.miss(name, column, row, value, "names an account that is not in accounts.csv")
        return found

    def idea(self, name: str, row: int, value: str) -> IdeaKey | None:
        found = self.ideas.get(value)
        if found is None:
            self.miss(name, "idea", row, value, "names an idea that is not in ideas.csv")
        return found

    def dimension(self, name: str, row: int, idea: IdeaKey, key: str) -> Any:
        found = self.dims.get((idea.rubric_id, key))
        if found is None:
            self.miss(name, "dimension", row, key, "is not a dimension of the idea's rubric")
        return found

    def raise_if_any(self) -> None:
        if self.errors:
            raise ApplicationError(
                f"{self.errors[0].field.split(':')[0]} has errors; nothing was imported.",
                errors=self.errors,
            )
