"""Every table an installation holds, and what its backup does with it: the one list.

Each model of every installed app is either CARRIED (the archive brings its rows back; compared
row for row by `check_installation_backup` and the round-trip tests), DERIVED (rebuilt after a
restore from what is carried: snapshots, work plans, shortlists), or NOT_CARRIED on purpose
(credentials, logs, what migrations install). A model in none of them fails
`tests/catalog/test_archive_tables.py`, so a new table cannot be forgotten by the backup.

Rows are compared by content, not by id: ids differ between two databases, so a reference is
written as the natural key of the row it names (a username, an idea's external id, ...), except
for the tables whose ids the archive keeps (judge runs, persona documents, personas, panel runs).
Every column is read by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.db import models

# Derived: rebuilt from the carried rows after a restore (docs/formats.md, "Installation archive").
DERIVED: dict[str, str] = {
    "disagreement.MetricSnapshot": "metric snapshots, queued for the worker by the restore",
    "disagreement.MetricSlice": "slices of the metric snapshots",
    "judges.AlignmentSnapshot": "alignment of every finished run, queued by the restore",
    "judges.ItemVector": "item vectors, recomputed by the next judge run",
    "judges.JudgeRunPlan": "work plans: an unfinished run comes back cancelled",
    "judges.JudgeRunChunk": "work plans: an unfinished run comes back cancelled",
    "judges.JudgeScheduleRequest": "pending schedule requests, made again by the next change",
    "judges.JudgeShortlist": "stored again from the restored prediction runs",
    "judges.PanelShortlist": "stored again from the restored panel runs",
    "judges.ItemTextChoice": "measured again by the worker when the restore commits",
    "decisions.DecisionSnapshot": "the decision board, queued by the restore",
    "decisions.DecisionSlice": "slices of the decision board",
    "findings.FindingSnapshot": "findings, queued by the restore at every threshold computed",
    "findings.FindingSlice": "slices of the findings snapshots",
    "panels.PanelChunk": "a panel run's work plan: an unfinished run comes back failed",
}
# Not carried, on purpose.
NOT_CARRIED: dict[str, str] = {
    "accounts.Invitation": "a record of mails sent",
    "authtoken.Token": "credentials: API clients make new tokens",
    "sessions.Session": "credentials: people sign in again",
    "admin.LogEntry": "the Django admin's log",
    "axes.AccessAttempt": "sign-in lockout counters",
    "axes.AccessLog": "sign-in log",
    "axes.AccessAttemptExpiration": "sign-in lockout counters",
    "axes.AccessFailureLog": "sign-in log",
    "auth.Permission": "installed by migrate",
    "contenttypes.ContentType": "installed by migrate",
    "auth.Group": "not used by the product (roles are a field of the account)",
    "catalog.ImportJob": "a record of uploads being imported; what they stored is carried",
}
# How a row is named across two databases, for the tables other rows refer to.
NATURAL: dict[str, tuple[str, ...]] = {
    "accounts.User": ("username",),
    "catalog.Domain": ("key",),
    "catalog.Patent": ("external_id",),
    "catalog.Idea": ("external_id",),
    "screening.Rubric": ("key",),
    "screening.Dimension": ("rubric__key", "key"),
    "screening.Rating": ("idea__external_id", "reviewer__username", "dimension__key"),
    "judges.JudgeConfig": ("name",),
    "judges.JudgeRun": ("id",),
    "panels.PersonaDocument": ("id",),
    "panels.Persona": ("id",),
    "panels.PanelRun": ("id",),
}
# Tables whose ids the archive keeps (rows name them by id: pages, snapshots, debate members).
KEEPS_IDS = {"judges.JudgeRun", "panels.PersonaDocument", "panels.Persona", "panels.PanelRun"}
# Columns of carried tables that are not carried, and why (docs/formats.md).
COLUMNS_NOT_CARRIED: dict[str, dict[str, str]] = {
    "catalog.Patent": {"created_at": "no time in the import format", "updated_at": "same"},
    "catalog.Idea": {"created_at": "no time in the import format", "updated_at": "same"},
    "screening.Rubric": {"created_at": "no time in the import format", "updated_at": "same"},
    "decisions.RoutingSuggestion": {"snapshot": "the decision board that proposed it is derived"},
    "accounts.User": {"groups": "not used", "user_permissions": "not used"},
}


@dataclass(frozen=True)
class TableCheck:
    """One table compared between the source and its restore."""

    label: str
    kind: str  # "carried", "derived", "not carried"
    source_rows: int
    restored_rows: int
    only_in_source: list[tuple[Any, ...]]
    only_in_restore: list[tuple[Any, ...]]
    reason: str = ""

    @property
    def ok(self) -> bool:
        if self.kind == "carried":
            return not (self.only_in_source or self.only_in_restore)
        return self.kind in ("derived", "not carried")


def installation_models() -> list[type[models.Model]]:
    """Every concrete, non-proxy model of every installed app (unmanaged ones too)."""
    return [m for m in apps.get_models() if not m._meta.proxy and not m._meta.abstract]


def kind_of(label: str) -> str | None:
    if label in DERIVED:
        return "derived"
    if label in NOT_CARRIED:
        return "not carried"
    if label in carried_labels():
        return "carried"
    return None


def carried_labels() -> list[str]:
    """The carried tables: every project model that is neither derived nor left out."""
    return [
        m._meta.label
        for m in installation_models()
        if m._meta.app_config.name.startswith("apps.")
        and m._meta.label not in DERIVED
        and m._meta.label not in NOT_CARRIED
    ]


def _namer(using: str) -> Callable[[str, Any], Any]:
    names: dict[str, dict[Any, tuple[Any, ...]]] = {}
    for label, fields in NATURAL.items():
        model = apps.get_model(label)
        names[label] = {
            pk: tuple(rest)
            for pk, *rest in model._default_manager.using(using).values_list("pk", *fields)
        }

    def name(label: str, pk: Any) -> Any:
        return None if pk is None else names[label].get(pk, ("missing", pk))

    return name


def table_rows(model: type[models.Model], *, using: str = "default", name: Any = None) -> list:
    """Every row of a carried table, every carried column (references as natural keys), as
    sorted tuples of reprs."""
    label = model._meta.label
    name = name or _namer(using)
    skipped = COLUMNS_NOT_CARRIED.get(label, {})
    fields = [
        f
        for f in model._meta.concrete_fields
        if not (f.primary_key and label not in KEEPS_IDS) and f.name not in skipped
    ]
    m2ms = [m for m in model._meta.many_to_many if m.name not in skipped]
    links: dict[str, dict[Any, list[Any]]] = {}
    for m2m in m2ms:
        through = m2m.remote_field.through
        assert through is not None and m2m.related_model is not None
        source = m2m.m2m_field_name()
        target = m2m.m2m_reverse_field_name()
        target_label = m2m.related_model._meta.label
        found: dict[Any, list[Any]] = {}
        for pk, other in through._default_manager.using(using).values_list(
            f"{source}_id", f"{target}_id"
        ):
            found.setdefault(pk, []).append(name(target_label, other))
        links[m2m.name] = found
    rows = []
    attnames = ["pk", *(f.attname for f in fields)]
    for pk, *values in (
        model._default_manager.using(using).values_list(*attnames).iterator(chunk_size=5000)
    ):
        row: list[str] = []
        for field, value in zip(fields, values, strict=True):
            if field.is_relation:
                assert field.related_model is not None
                target = field.related_model._meta.label
                value = name(target, value) if target in NATURAL else ("no natural key", value)
            elif label == "judges.JudgePrediction" and field.name == "example_rating_ids":
                value = [name("screening.Rating", r) for r in value or []]
            row.append(repr(value))
        for m2m in m2ms:
            row.append(repr(sorted(links[m2m.name].get(pk, []), key=repr)))
        rows.append(tuple(row))
    return sorted(rows)


def installation_tables(*, using: str = "default") -> dict[str, list]:
    """Every carried table's rows (`table_rows`), by model label."""
    name = _namer(using)
    return {
        label: table_rows(apps.get_model(label), using=using, name=name)
        for label in carried_labels()
    }


def installation_snapshot(*, using: str = "default") -> dict[str, dict[str, Any]]:
    """Every table of the installation: carried ones with their rows (`table_rows`, lists of
    strings, so the snapshot travels as JSON), the others with their count."""
    name = _namer(using)
    snapshot: dict[str, dict[str, Any]] = {}
    for model in installation_models():
        label = model._meta.label
        kind = kind_of(label) or "unclassified"
        manager = model._default_manager.using(using)
        if kind == "carried":
            rows = [list(r) for r in table_rows(model, using=using, name=name)]
            snapshot[label] = {"kind": kind, "count": len(rows), "rows": rows}
        else:
            snapshot[label] = {"kind": kind, "count": manager.count(), "rows": None}
    return snapshot


def compare_snapshots(
    source: dict[str, dict[str, Any]], restored: dict[str, dict[str, Any]], *, shown: int = 3
) -> list[TableCheck]:
    """Every table, carried ones compared row for row (at most `shown` differing rows kept per
    side), the others counted with the reason they are not compared."""
    checks = []
    for label in sorted(set(source) | set(restored)):
        before = source.get(label) or {"kind": "missing", "count": 0, "rows": []}
        after = restored.get(label) or {"kind": "missing", "count": 0, "rows": []}
        kind = before["kind"]
        if kind != "carried":
            checks.append(
                TableCheck(
                    label=label,
                    kind=kind,
                    source_rows=before["count"],
                    restored_rows=after["count"],
                    only_in_source=[],
                    only_in_restore=[],
                    reason=DERIVED.get(label) or NOT_CARRIED.get(label) or "not classified",
                )
            )
            continue
        rows_before = [tuple(r) for r in before["rows"]]
        rows_after = [tuple(r) for r in after["rows"] or []]
        checks.append(
            TableCheck(
                label=label,
                kind=kind,
                source_rows=len(rows_before),
                restored_rows=len(rows_after),
                only_in_source=_difference(rows_before, rows_after)[:shown],
                only_in_restore=_difference(rows_after, rows_before)[:shown],
            )
        )
    return checks


def _difference(rows: list, other: list) -> list:
    """Rows of `rows` not matched in `other`, duplicates counted (a multiset difference)."""
    left: dict[Any, int] = {}
    for row in other:
        left[row] = left.get(row, 0) + 1
    out = []
    for row in rows:
        if left.get(row, 0):
            left[row] -= 1
        else:
            out.append(row)
    return out
