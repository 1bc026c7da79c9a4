"""Ideas: one row per idea, upserted by external_id.

`patent` names a stored patent's external_id. The title is optional (rated texts often have none:
pages then show an excerpt of the description), but an idea needs a title or a description
(`idea_lacks_text`, the rule the API and the Django admin apply too).

A restore (`restore=True`, the installation archive) accepts what an installation stored before
that rule held everywhere (the API accepted an emptied idea until issue 29): such ideas come back
as they were, counted in a note, instead of refusing the whole archive.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from apps.catalog.models import (
    EXTERNAL_ID_MAX,
    IDEA_TEXT_FIELDS,
    IDEA_TEXT_REQUIRED,
    Idea,
    Patent,
    idea_lacks_text,
)
from apps.dataio.importers import ImportResult
from apps.dataio.importers.common import (
    Problems,
    check_columns,
    check_lengths,
    chunked,
    report_duplicates,
    require_values,
)
from apps.dataio.importers.reading import read_table
from apps.dataio.importers.streams import ImportContent
from apps.dataio.importers.upsert import upsert

REQUIRED = ["external_id", "patent"]
OPTIONAL = list(IDEA_TEXT_FIELDS)
TEXT_FIELDS = list(IDEA_TEXT_FIELDS)


def import_ideas(
    *, content: ImportContent, filename: str, actor: Any = None, restore: bool = False
) -> ImportResult:
    frame = read_table(content, filename)
    check_columns(frame, required=REQUIRED, optional=OPTIONAL, kind="ideas")
    problems = Problems()
    require_values(frame, problems, REQUIRED)
    check_lengths(frame, problems, {"external_id": EXTERNAL_ID_MAX, "title": 500, "source": 200})
    blank = pd.Series("", index=frame.index)
    title, description = frame.get("title", blank), frame.get("description", blank)
    textless = pd.Series(
        [idea_lacks_text(t, d) for t, d in zip(title.tolist(), description.tolist(), strict=True)],
        index=frame.index,
        dtype=bool,
    )
    if not restore:
        problems.add_rows(frame, textless, "title", IDEA_TEXT_REQUIRED, column="external_id")
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
    result = ImportResult(
        kind="ideas",
        rows=len(frame),
        created=counts.created,
        updated=counts.updated,
        unchanged=counts.unchanged,
    )
    if restore and textless.any():
        result.notes.append(
            f"{int(textless.sum())} ideas have neither a title nor a description (stored before "
            "that was refused); restored as they were: give each one a title."
        )
    return result
