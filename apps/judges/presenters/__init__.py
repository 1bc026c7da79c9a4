"""Shape stored alignment snapshots into what the judge pages, CSVs and API show.

- shapes: pure functions over a snapshot's dicts (charts, tables, verdict grid);
- exports: the CSV tables and API rows;
- pages: one page's context, read through the selectors (nothing computes alignment);
- predictions: the predictions page and the prediction rows of its CSV and the API.
"""

from apps.judges.presenters.exports import (
    CSV_TABLES,
    PREDICTION_CSV_HEADER,
    SHORTLIST_CSV_HEADER,
    alignment_csv,
    csv_table,
    prediction_api_rows,
    prediction_csv_rows,
    shortlist_csv_rows,
)
from apps.judges.presenters.pages import (
    EMPTY_RESULT,
    SnapshotState,
    alignment_api,
    alignment_page,
    case_page,
    local_note,
    my_alignment_api,
    my_judge_page,
    run_page,
    runs_context,
    skipped_configs,
    snapshot_state,
)
from apps.judges.presenters.predictions import (
    prediction_rows,
    prediction_rows_of,
    predictions_page,
    shortlist_rows,
)
from apps.judges.presenters.shapes import (
    KIND_COLOURS,
    KIND_LABELS,
    alignment_table,
    chart_series,
    coarse_chart,
    coarse_rows,
    coverage_charts,
    discard_matrix,
    model_labels,
    reasoning,
    verdict_table,
)
from apps.judges.services.alignment import scope_for_source

__all__ = [
    "CSV_TABLES",
    "EMPTY_RESULT",
    "KIND_COLOURS",
    "KIND_LABELS",
    "PREDICTION_CSV_HEADER",
    "SHORTLIST_CSV_HEADER",
    "SnapshotState",
    "alignment_api",
    "alignment_csv",
    "alignment_page",
    "alignment_table",
    "case_page",
    "chart_series",
    "coarse_chart",
    "coarse_rows",
    "coverage_charts",
    "csv_table",
    "discard_matrix",
    "local_note",
    "model_labels",
    "my_alignment_api",
    "my_judge_page",
    "prediction_api_rows",
    "prediction_csv_rows",
    "prediction_rows",
    "predictions_page",
    "reasoning",
    "run_page",
    "prediction_rows_of",
    "runs_context",
    "skipped_configs",
    "scope_for_source",
    "shortlist_csv_rows",
    "shortlist_rows",
    "snapshot_state",
    "verdict_table",
]
