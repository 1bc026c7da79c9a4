"""Ideas: one row per idea, upserted by external_id.

`patent` names a stored patent's external_id. The title is optional (rated texts often have none:
pages then show an excerpt of the description), but an idea needs a title or a description.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from apps.catalog.importers import ImportResult
from apps.catalog.importers.common import (
    ImportContent,
    Problems,
    check_columns,
    check_lengths,
    chunked,
    read_table,
    report_duplicates,
    require_values,
)
from apps.catalog.importers.upsert import upsert
from apps.catalog.models import EXTERNAL_ID_MAX, Idea, Patent

REQUIRED = ["external_id", "patent"]
OPTIONAL = ["title", "description", "implementation", "differentiation", "source"]
TEXT_FIELDS = ["title", "description", "implementation", "differentiation", "source"]


def import_ideas(*, content: ImportContent, filename: str, actor: Any = None) -> ImportResult:
    frame = read_table(content, filename)
    check_columns(frame, required=REQUIRED, optional=OPTIONAL, kind="ideas")
    problems = Problems()
    require_values(frame, problems, REQUIRED)
    check_lengths(frame, problems, {"external_id": EXTERNAL_ID_MAX, "title": 500, "source": 200})
    blank = pd.Series("", index=frame.index)
    title, description = frame.get("title", blank), frame.get("description", blank)
    problems.add_rows(
        frame,
        (title == "") & (description == ""),
        "title",
        "is empty and so is the description: an idea needs one of them",
        column="external_id",
    )
    patent_ids: dict[str, int] = {}
    wanted = [p for p in frame["patent"].unique().tolist() if p]
    for part in chunked(wanted, 5000):
        patent_ids.update(
            Patent.objects.filter(external_id__in=part).values_list("external_id", "id")
        )
    frame = frame.assign(patent_id=frame["patent"].map(patent_ids))
    problems.add_rows(
        frame,
        (frame["patent"] != "") & frame["patent_id"].isna(),
        "patent",
        "is not the external_id of a stored patent; import the patents first",
    )
    report_duplicates(frame, problems, ["external_id"], field_name="external_id")
    problems.raise_if_any("The ideas file has errors.")

    frame["patent_id"] = frame["patent_id"].astype("int64")
    fields = ["patent_id", *[f for f in TEXT_FIELDS if f in frame.columns]]
    counts, _ = upsert(
        Idea,
        key="external_id",
        frame=frame[["external_id", *fields]],
        fields=fields,
        all_fields=["patent_id", *TEXT_FIELDS],
        defaults={f: "" for f in TEXT_FIELDS},
    )
    return ImportResult(
        kind="ideas",
        rows=len(frame),
        created=counts.created,
        updated=counts.updated,
        unchanged=counts.unchanged,
    )
