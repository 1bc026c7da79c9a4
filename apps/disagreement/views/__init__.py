"""Disagreement dashboards for managers and admins (reviewers never see other reviewers' scores).

One module per job: the shared dashboard context, the pages, the CSV exports, the snapshots.
"""

from apps.disagreement.views.exports import EXPORTS, export_csv  # noqa: F401
from apps.disagreement.views.pages import (  # noqa: F401
    agreement,
    contested,
    idea_detail,
    overview,
    panel,
    split,
    strictness,
)
from apps.disagreement.views.snapshots import recompute, snapshot_progress  # noqa: F401
