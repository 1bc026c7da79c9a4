"""The predictions page's context and the prediction rows the CSV and the API read: the finals
of the latest prediction runs, the stored shortlists (reads only, through the selectors)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.judges import selectors
from apps.judges.presenters.pages import local_note


def prediction_rows(
    *, reviewer: User | None, domain: Domain | None, dimension: str | None
) -> list[dict[str, Any]]:
    """Finals of the latest prediction runs (the CSV and the API: every prediction), each with
    whether it is on its reviewer's stored shortlist for its dimension, and the model label."""
    return prediction_rows_of(
        list(
            selectors.unrated_predictions(
                reviewer_id=reviewer.id if reviewer else None, domain=domain, dimension=dimension
            )
        )
    )


def prediction_rows_of(finals: list[Any]) -> list[dict[str, Any]]:
    """`prediction_rows` for these finals (one page of the API): the shortlist and model label
    lookups read only their runs."""
    run_ids = {f.run_id for f in finals}
    listed = selectors.shortlisted_keys(run_ids=run_ids)
    labels = selectors.run_model_labels(run_ids=run_ids)
    return [
        {
            "f": f,
            "shortlisted": (f.run_id, f.dimension_id, f.idea_id) in listed,
            "model": "; ".join(labels.get((f.run_id, f.kind), [])),
        }
        for f in finals
    ]


# Shortlist entries shown on the page (every reviewer's lists, N per list); the CSV has all.
SHORTLIST_SHOWN = 200


def shortlist_rows(
    *, reviewer: User | None, domain: Domain | None, dimension: str | None
) -> list[Any]:
    """The stored shortlists under the page's filters (selectors.shortlist_for): with a
    dimension, that dimension's lists; without, every list (all dimensions first). Without a
    reviewer filter, the domains' panel shortlists follow (selectors.panel_shortlist_for)."""
    rows: list[Any] = list(
        selectors.shortlist_for(
            reviewer_id=reviewer.id if reviewer else None, domain=domain, dimension=dimension
        )
    )
    if reviewer is None:
        rows += list(selectors.panel_shortlist_for(domain=domain, dimension=dimension))
    return rows


def predictions_page(
    *, form: Any, reviewer: User | None, domain: Domain | None, dimension: str | None
) -> dict[str, Any]:
    # Counted and sliced in the database: the page reads at most SHORTLIST_SHOWN stored rows.
    entries = selectors.shortlist_for(
        reviewer_id=reviewer.id if reviewer else None, domain=domain, dimension=dimension
    )
    n_rows = selectors.unrated_predictions(
        reviewer_id=reviewer.id if reviewer else None, domain=domain, dimension=dimension
    ).count()
    # The domains' panel shortlists: managers' reading (the page is theirs), hidden when the
    # page is filtered to one reviewer.
    panel = (
        selectors.panel_shortlist_for(domain=domain, dimension=dimension)
        if reviewer is None
        else selectors.panel_shortlist_for().none()
    )
    return {
        "form": form,
        "panel_entries": list(panel[:SHORTLIST_SHOWN]),
        "n_panel_entries": panel.count(),
        "entries": list(entries[:SHORTLIST_SHOWN]),
        "n_entries": entries.count(),
        "n_lists": entries.filter(rank=1).count(),
        "shortlist_size": int(getattr(settings, "JUDGE_SHORTLIST_SIZE", 10)),
        "n_rows": n_rows,
        "work": selectors.judge_work_progress(),
        **local_note(),
        "gaps": [
            g
            for g in selectors.history_gaps(reviewer_ids=[reviewer.id] if reviewer else None)
            if g["missing"] and g["n"]
        ][:10],
    }
