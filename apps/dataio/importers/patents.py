"""Patents: one row per patent, upserted by external_id; unknown domains are created (once
ratings exist, only when allowed: apps.dataio.importers.domains)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from apps.catalog.models import EXTERNAL_ID_MAX, Domain, Patent
from apps.dataio.importers import ImportResult
from apps.dataio.importers.common import (
    ROW,
    SLUG,
    Problems,
    check_columns,
    check_lengths,
    report_duplicates,
    require_values,
)
from apps.dataio.importers.domains import check_new_domains, kept_name_note
from apps.dataio.importers.reading import read_table
from apps.dataio.importers.streams import ImportContent
from apps.dataio.importers.upsert import upsert

REQUIRED = ["external_id", "domain", "title"]
OPTIONAL = ["abstract", "claims", "domain_name"]
TEXT_FIELDS = ["title", "abstract", "claims"]


def import_patents(
    *, content: ImportContent, filename: str, actor: Any = None, create_domains: bool = False
) -> ImportResult:
    frame = read_table(content, filename)
    check_columns(frame, required=REQUIRED, optional=OPTIONAL, kind="patents")
    problems = Problems()
    require_values(frame, problems, REQUIRED)
    check_lengths(
        frame,
        problems,
        {"external_id": EXTERNAL_ID_MAX, "title": 500, "domain": 64, "domain_name": 200},
    )
    bad_slug = (frame["domain"] != "") & ~frame["domain"].str.match(SLUG.pattern)
    problems.add_rows(frame, bad_slug, "domain", "must be a key made of letters, digits, - and _")
    report_duplicates(frame, problems, ["external_id"], field_name="external_id")
    problems.raise_if_any("The patents file has errors.")

    result = ImportResult(kind="patents", rows=len(frame))
    domain_ids = _ensure_domains(frame, result, create_domains=create_domains)
    frame = frame.assign(domain_id=frame["domain"].map(domain_ids))
    fields = ["domain_id", *[f for f in TEXT_FIELDS if f in frame.columns]]
    counts, _ = upsert(
        Patent,
        key="external_id",
        frame=frame[["external_id", *fields]],
        fields=fields,
        all_fields=["domain_id", *TEXT_FIELDS],
        defaults={"abstract": "", "claims": ""},
    )
    result.created, result.updated, result.unchanged = (
        counts.created,
        counts.updated,
        counts.unchanged,
    )
    return result


def _ensure_domains(
    frame: pd.DataFrame, result: ImportResult, *, create_domains: bool
) -> dict[str, int]:
    """Create the domains the file names that do not exist yet (see importers.domains); an
    existing domain keeps its name whatever `domain_name` says."""
    names: dict[str, str] = {}
    if "domain_name" in frame.columns:
        named = frame.loc[frame["domain_name"] != "", ["domain", "domain_name"]].drop_duplicates(
            "domain"
        )
        names = dict(named.itertuples(index=False, name=None))
    keys = sorted(frame["domain"].unique())
    existing = {d.key: d for d in Domain.objects.filter(key__in=keys)}
    new = [k for k in keys if k not in existing]
    first_rows = (
        frame.drop_duplicates("domain").set_index("domain")[ROW].to_dict()
        if ROW in frame.columns
        else {}
    )
    check_new_domains(new, allowed=create_domains, rows=first_rows)
    created = []
    for key in keys:
        domain = existing.get(key)
        if domain is None:
            name = names.get(key) or key.replace("-", " ").replace("_", " ").title()
            created.append(Domain(key=key, name=name))
        elif key in names and domain.name != names[key]:
            result.notes.append(kept_name_note(key, domain.name, names[key]))
    if created:
        Domain.objects.bulk_create(created)
        result.notes.append("New domains: " + ", ".join(d.key for d in created) + ".")
    return dict(Domain.objects.filter(key__in=keys).values_list("key", "id"))
