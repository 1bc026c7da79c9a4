"""The whole installation as one archive in the documented import formats, and back.

The archive is a zip of plain files an admin can read and re-import one by one (docs/formats.md,
"Installation archive"):

    manifest.json            format version, creation time, default rubric, files in load order
    rubrics/<key>.yaml       every rubric with its domains and prompt wording
    patents.csv ideas.csv reviewers.csv ratings.csv
                             the import formats; ratings carry their state (`status`), yes/no
                             answers, rationales and both timestamps
    rating_history.csv       every change of every rating (restored as it is by archive import)
    judge_configs.jsonl      judge configurations
    judge_predictions.csv    every stored judge prediction (for audit; not re-imported)
    decision_routing.jsonl, decision_shortlists.jsonl, decision_marks.jsonl, panel_*.jsonl
                             the routing switch, the shortlist size and the decision marks
                             per domain, and the persona panels (version 3)

`installation_import` loads such an archive into an empty installation through the same
importers as single files, all or nothing, then restores the rating history row for row, so
metrics and rating states come back identical.
"""

from apps.catalog.services.archive.export import installation_export
from apps.catalog.services.archive.restore import installation_import, installation_is_empty

__all__ = ["installation_export", "installation_import", "installation_is_empty"]
