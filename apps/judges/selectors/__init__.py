"""Reads for the judges, split by what is read (see each module's docstring):

- common: rubrics and dimensions, the rating pool, idea rows, labels;
- reviewers: reviewers' rating histories and the ratings a judge still needs;
- runs: configurations, run listings, studies, progress;
- predictions: finals and truth frames, unrated predictions, shortlists, a case's finals;
- reports: the alignment report computed from finals and truth;
- snapshots: the stored alignment snapshots, a reviewer's own section, one run's rows.

The names below are the public interface that services, views, the API, commands and tests
import (`from apps.judges import selectors`).
"""

from apps.judges.selectors.common import (
    POOL_COLUMNS,
    dimension_labels,
    dimension_names,
    dimensions_for_domain,
    domain_by_key,
    idea_rows,
    model_label,
    rating_pool_frame,
    rating_pool_rows,
    rubric_dimension,
    rubric_for_domain,
    scales_for,
)
from apps.judges.selectors.predictions import (
    ALL_DIMENSIONS,
    case_finals,
    finals_frame,
    panel_shortlist_for,
    reviewers_with_finals,
    shortlist_for,
    shortlisted_keys,
    truth_frame,
    unrated_predictions,
)
from apps.judges.selectors.reports import (
    alignment_report,
    alignment_table,
    report_run_ids,
    report_sources,
)
from apps.judges.selectors.reviewers import (
    forget_history_gaps,
    history_gaps,
    reviewer_history_counts,
    reviewer_unrated_ideas,
    reviewers_history_counts,
    reviewers_profile_domain_ids,
)
from apps.judges.selectors.runs import (
    CURRENT_RUN_FIELDS,
    RUN_ORIGINS,
    active_auto_configs,
    current_run_ids,
    judge_runs,
    judge_work_progress,
    latest_done_runs,
    run_model_labels,
    study_run,
)
from apps.judges.selectors.snapshots import (
    alignment_last_seconds,
    alignment_sections,
    alignment_snapshot_failure,
    alignment_snapshot_is_stale,
    alignment_snapshot_latest,
    alignment_snapshot_pending,
    reviewer_alignment,
    run_alignment_rows,
)

__all__ = [
    "rubric_dimension",
    "ALL_DIMENSIONS",
    "CURRENT_RUN_FIELDS",
    "POOL_COLUMNS",
    "RUN_ORIGINS",
    "active_auto_configs",
    "alignment_last_seconds",
    "alignment_sections",
    "alignment_report",
    "alignment_snapshot_failure",
    "alignment_snapshot_is_stale",
    "alignment_snapshot_latest",
    "alignment_snapshot_pending",
    "alignment_table",
    "case_finals",
    "current_run_ids",
    "dimension_labels",
    "dimension_names",
    "dimensions_for_domain",
    "domain_by_key",
    "finals_frame",
    "forget_history_gaps",
    "history_gaps",
    "idea_rows",
    "judge_runs",
    "judge_work_progress",
    "latest_done_runs",
    "model_label",
    "rating_pool_frame",
    "rating_pool_rows",
    "report_run_ids",
    "report_sources",
    "reviewer_alignment",
    "reviewer_history_counts",
    "reviewer_unrated_ideas",
    "reviewers_history_counts",
    "reviewers_profile_domain_ids",
    "reviewers_with_finals",
    "rubric_for_domain",
    "run_alignment_rows",
    "run_model_labels",
    "scales_for",
    "panel_shortlist_for",
    "shortlist_for",
    "shortlisted_keys",
    "study_run",
    "truth_frame",
    "unrated_predictions",
]
