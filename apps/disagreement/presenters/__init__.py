"""Shape a snapshot's metrics into table rows, chart data and CSV rows for the dashboards.

Pure functions over the contract's dicts (no queries), shared by the pages, the CSV exports and
the API, so the numbers on a chart and in its CSV are the same numbers. One module per page
family; everything is re-exported here, so callers write ``presenters.grid(...)``.
"""

from apps.disagreement.presenters.common import (  # noqa: F401
    ALL,
    DEMO_BACKGROUNDS,
    DEMO_COLORS,
    GROUP_PALETTE,
    csv_key,
    dimensions_in,
    domains_in,
    filter_rows,
    fmt,
    group_colors,
    groups_in,
    label_background,
    label_domain,
    tone_alpha,
    tone_jaccard,
)
from apps.disagreement.presenters.grid import (  # noqa: F401
    category_rows,
    grid,
    grid_chart,
    grid_csv,
)
from apps.disagreement.presenters.ideas import (  # noqa: F401
    CONTESTED_ORDER,
    contested_csv,
    contested_sorted,
    split_chart,
    split_csv,
    split_rows,
)
from apps.disagreement.presenters.panel import (  # noqa: F401
    PANEL_DASHES,
    PANEL_SAME_CURVE,
    panel_chart,
    panel_csv,
    panel_rows,
)
from apps.disagreement.presenters.payload import (  # noqa: F401
    metrics_payload,
)
from apps.disagreement.presenters.reviewers import (  # noqa: F401
    PAIRS_LISTED,
    heatmap,
    pair_extremes,
    pairwise_csv,
    strictness_chart,
    strictness_csv,
)
