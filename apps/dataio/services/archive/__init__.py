"""The whole installation as one archive in the documented import formats, and back.

The archive is a zip of plain files an admin can read and re-import one by one (docs/formats.md,
"Installation archive"):

    manifest.json            format version, creation time, default rubric, files in load order
    rubrics/<key>.yaml       every rubric with its domains and prompt wording
    patents.csv ideas.csv reviewers.csv ratings.csv
                             the import formats; ratings carry their state (`status`), yes/no
                             answers, rationales and both timestamps
    domains.csv              every domain, with its name and rubric (version 4)
    rating_history.csv       every change of every rating (restored as it is by archive import)
    judge_configs.jsonl      judge configurations
    judge_predictions.csv    every stored judge prediction (for audit; not re-imported)
    decision_routing.jsonl, panel_*.jsonl
                             the routing switch per domain and the persona panels (version 3)
    decision_suggestions.jsonl
                             the routing suggestions with their status (version 4)
    decision_shortlists.jsonl, decision_marks.jsonl
                             the shortlist size per domain and every version of every decision
                             mark (issue 26; an older archive has neither)

From version 4 on, a long file is split into parts under the per-file limit (members.py), so no
size limit refuses an archive the product wrote; the export warns when it could not write
something a restore under the running settings reads back.

`installation_import` loads such an archive into an empty installation through the same
importers as single files, all or nothing, then restores the rating history row for row, so
metrics and rating states come back identical.
"""

from apps.dataio.services.archive.export import (
    ExportReport,
    installation_export,
    installation_export_to,
)
from apps.dataio.services.archive.restore import installation_import, installation_is_empty

__all__ = [
    "ExportReport",
    "installation_export",
    "installation_export_to",
    "installation_import",
    "installation_is_empty",
]
