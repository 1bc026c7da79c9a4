"""The persona panels and the per-domain routing switch in the archive (version 3).

Six files, one JSON object per line, each a table's rows with references by natural key
(domain key, username, idea external id, dimension key within the idea's rubric):

    decision_routing.jsonl   per domain: automatic routing on or off, who set it and when
    decision_suggestions.jsonl  (version 4) every routing suggestion with its status (open,
                             accepted, superseded), who decided and when; the decision snapshot
                             that proposed it is derived and not carried (restored empty)
    decision_shortlists.jsonl  (issue 26) per domain: the shortlist size N, who set it, when
    decision_marks.jsonl     (issue 26) every version of every decision mark, with the board's
                             figures kept in it (an older archive has neither file)
    panel_documents.jsonl    the documents personas were extracted from, with their text
    panel_personas.jsonl     every persona (documents, reviewers' histories, invented)
    panel_runs.jsonl         panel runs, with the ids of their personas
    panel_debates.jsonl      per run, idea and dimension: the single judge, the panel, the rounds
    panel_turns.jsonl        every model call of every debate, as it happened

Documents, personas and runs keep their ids, as judge runs do: a turn names its persona by id
(`member`, no foreign key, 0 for the single judge) and so does a debate's `rounds`, and pages
name runs by id; a restore goes into an installation that has none. A run's chunks are its work
plan and are not carried: a run that was queued or running comes back failed, with a note to
start it again (the judges' runs come back cancelled for the same reason).

Rows are written with raw INSERTs (rows.insert_rows), keeping every time as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.core.management.color import no_style
from django.db import connection, models

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea
from apps.dataio.importers import ImportResult
from apps.dataio.services.archive.common import iso, parse_time
from apps.dataio.services.archive.members import ArchiveFiles, ArchiveWriter
from apps.dataio.services.archive.rows import INTERRUPTED, IdeaKey, Keys, insert_rows
from apps.decisions.models import DecisionMark, DomainRouting, DomainShortlist, RoutingSuggestion
from apps.panels.models import PanelDebate, PanelRun, PanelTurn, Persona, PersonaDocument
from apps.screening.models import Dimension

# How a column is written and read back: as it is, or as a natural key / an ISO time.
PLAIN, TIME, USER, DOMAIN, IDEA, DIMENSION = "plain", "time", "user", "domain", "idea", "dim"


@dataclass(frozen=True)
class TableFile:
    name: str
    model: type[models.Model]
    # (field name, how): the model's fields, in the file's key order.
    columns: tuple[tuple[str, str], ...]
    keeps_ids: bool = False


def _cols(*spec: str) -> tuple[tuple[str, str], ...]:
    """ "name" is a plain column, "name:how" one of the kinds above."""
    return tuple((s.split(":")[0], s.split(":")[1] if ":" in s else PLAIN) for s in spec)


TIMES = ("created_at:time", "updated_at:time")
ROUTING = TableFile(
    "decision_routing.jsonl",
    DomainRouting,
    _cols("domain:domain", "automatic", "updated_by:user", "updated_at:time"),
)
DOCUMENTS = TableFile(
    "panel_documents.jsonl",
    PersonaDocument,
    _cols(
        "id",
        "domain:domain",
        "title",
        "text",
        "uploaded_by:user",
        "status",
        "error",
        "stakeholders_found",
        *TIMES,
    ),
    keeps_ids=True,
)
PERSONAS = TableFile(
    "panel_personas.jsonl",
    Persona,
    _cols(
        "id",
        "domain:domain",
        "source",
        "name",
        "description",
        "dimensions",
        "evidence",
        "reviewer:user",
        "active",
        "model",
        *TIMES,
    ),
    keeps_ids=True,
)
RUNS = TableFile(
    "panel_runs.jsonl",
    PanelRun,
    _cols(
        "id",
        "domain:domain",
        "persona_source",
        "dimension_keys",
        "max_rounds",
        "budget_tokens",
        "estimate",
        "model",
        "status",
        "error",
        "requested_by:user",
        "heartbeat_at:time",
        "finished_at:time",
        "calls",
        "prompt_tokens",
        "completion_tokens",
        "figures",
        *TIMES,
    ),
    keeps_ids=True,
)
SUGGESTIONS = TableFile(
    "decision_suggestions.jsonl",
    RoutingSuggestion,
    _cols(
        "reviewer:user",
        "idea:idea",
        "kind",
        "value",
        "reason",
        "status",
        "created_at:time",
        "decided_at:time",
        "decided_by:user",
    ),
)
SHORTLISTS = TableFile(
    "decision_shortlists.jsonl",
    DomainShortlist,
    _cols("domain:domain", "size", "updated_by:user", "updated_at:time"),
)
MARKS = TableFile(
    "decision_marks.jsonl",
    DecisionMark,
    _cols(
        "idea:idea",
        "domain:domain",
        "version",
        "mark",
        "note",
        "decided_by:user",
        "decided_at:time",
        "figures",
    ),
)
TARGET = ("run", "idea:idea", "dimension:dim")
DEBATES = TableFile(
    "panel_debates.jsonl",
    PanelDebate,
    _cols(
        *TARGET,
        "single_score",
        "before_score",
        "after_score",
        "stop_reason",
        "debate_rounds",
        "rounds",
        "synthesis",
        "created_at:time",
    ),
)
TURNS = TableFile(
    "panel_turns.jsonl",
    PanelTurn,
    _cols(
        *TARGET,
        "kind",
        "member",
        "round",
        "score",
        "reason",
        "raw",
        "error",
        "prompt_fingerprint",
        "prompt_tokens",
        "completion_tokens",
        "latency_ms",
        "attempts",
        "model",
        "created_at:time",
    ),
)
# In restore order: each file refers only to the ones before it.
TABLE_FILES = (
    ROUTING,
    SUGGESTIONS,
    SHORTLISTS,
    MARKS,
    DOCUMENTS,
    PERSONAS,
    RUNS,
    DEBATES,
    TURNS,
)
PANEL_FILES = [t.name for t in TABLE_FILES]
RUN_PERSONAS = "personas"  # panel_runs.jsonl: the ids of the run's personas


# --------------------------------------------------------------------------- export


def panels_write(writer: ArchiveWriter) -> None:
    """The version-3 files (module docstring, the suggestions from version 4 on)."""
    names = {
        USER: dict(User.objects.values_list("id", "username")),
        DOMAIN: dict(Domain.objects.values_list("id", "key")),
        IDEA: dict(Idea.objects.values_list("id", "external_id")),
        DIMENSION: dict(Dimension.objects.values_list("id", "key")),
    }
    links: dict[int, list[int]] = {}
    for run_id, persona_id in PanelRun.personas.through.objects.values_list(
        "panelrun_id", "persona_id"
    ):
        links.setdefault(run_id, []).append(persona_id)
    for table in TABLE_FILES:
        rows = _export_rows(table, names)
        if table is RUNS:
            rows = ({**r, RUN_PERSONAS: sorted(links.get(r["id"], []))} for r in rows)
        writer.write_jsonl(table.name, rows)


def _export_rows(table: TableFile, names: dict[str, dict[int, str]]) -> Iterator[dict[str, Any]]:
    attnames = [_field(table, f).attname for f, _ in table.columns]
    rows = table.model._default_manager.order_by("pk").values_list(*attnames)
    for values in rows.iterator(chunk_size=2000):
        row = {}
        for (column, how), value in zip(table.columns, values, strict=True):
            if how == TIME:
                row[column] = iso(value) or None
            elif how != PLAIN:
                row[column] = None if value is None else names[how][value]
            else:
                row[column] = value
        yield row


def _field(table: TableFile, name: str) -> models.Field:
    field = table.model._meta.get_field(name)
    assert isinstance(field, models.Field)
    return field


# --------------------------------------------------------------------------- restore


def panel_rows_exist() -> bool:
    """Whether any table the restore fills with kept ids or one row per domain holds rows."""
    return any(t.model._default_manager.exists() for t in TABLE_FILES)


def panels_restore(files: ArchiveFiles) -> list[ImportResult]:
    """Every file of TABLE_FILES the archive lists (an older one has fewer), row for row;
    errors name the file, its line and column."""
    keys = Keys()
    results = []
    for table in TABLE_FILES:
        if table.name not in files.manifest["restored"]:
            continue
        records = list(files.lines(table.name))
        result = ImportResult(kind=table.name.split(".")[0].replace("_", " "), rows=len(records))
        rows = [row for n, r in enumerate(records, start=1) if (row := _row(table, keys, n, r))]
        keys.raise_if_any()
        interrupted = 0
        if table is RUNS:
            interrupted = _interrupt_active(rows)
        columns = [f for f, _ in table.columns]
        result.created = insert_rows(table.model, columns, rows)
        if table is RUNS:
            insert_rows(
                PanelRun.personas.through,
                ["panelrun", "persona"],
                ((r["id"], p) for r in records for p in r.get(RUN_PERSONAS, [])),
            )
        if table.keeps_ids:
            with connection.cursor() as cur:
                for sql in connection.ops.sequence_reset_sql(no_style(), [table.model]):
                    cur.execute(sql)
        if interrupted:
            result.notes.append(
                f"{interrupted} unfinished panel runs came back failed ({INTERRUPTED})"
            )
        results.append(result)
    return results


def _row(table: TableFile, keys: Keys, n: int, r: dict[str, Any]) -> list[Any] | None:
    out: list[Any] = []
    idea: IdeaKey | None = None
    for column, how in table.columns:
        value = r.get(column)
        if how == TIME:
            out.append(parse_time(value))
        elif how == USER:
            out.append(keys.user(table.name, column, n, value or "", required=False))
        elif how == DOMAIN:
            found = keys.domains.get(value or "")
            if found is None:
                keys.miss(table.name, column, n, str(value), "is not a domain of the archive")
            out.append(found)
        elif how == IDEA:
            idea = keys.idea(table.name, n, value or "")
            out.append(idea.id if idea else None)
        elif how == DIMENSION:
            out.append(keys.dimension(table.name, n, idea, value or "") if idea else None)
        else:
            out.append(value)
    return None if keys.errors else out


def _interrupt_active(rows: list[list[Any]]) -> int:
    """A queued or running run has lost its chunks: it comes back failed, with a note."""
    at = {column: i for i, (column, _) in enumerate(RUNS.columns)}
    n = 0
    for row in rows:
        if row[at["status"]] in (PanelRun.Status.QUEUED, PanelRun.Status.RUNNING):
            row[at["status"]] = PanelRun.Status.FAILED
            row[at["error"]] = INTERRUPTED
            row[at["finished_at"]] = row[at["updated_at"]]
            n += 1
    return n
