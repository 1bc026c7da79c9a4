"""Shared builders of the analysis tests: small rating frames in the rating_frame shape, written
by hand, and the metrics computed from them."""

import numpy as np
import pandas as pd

from apps.disagreement.analysis import compute_metrics

# Krippendorff's levels of measurement, for tests that must hold at every level.
MEASUREMENT_LEVELS = ["nominal", "ordinal", "interval", "ratio"]

BACKGROUND = {"ann": "technical", "bob": "business", "cat": "technical", "dan": "business"}


def frame_from(rows, domain_of=None):
    """rows: (reviewer, idea_id, dimension, score|None[, status]); None score = gated."""
    records = []
    ids = {}
    for row in rows:
        reviewer, idea, dim, score = row[:4]
        status = row[4] if len(row) > 4 else ("scored" if score is not None else "gated")
        ids.setdefault(reviewer, len(ids) + 1)
        domain = domain_of(idea) if domain_of else "nlp"
        records.append(
            {
                "idea_id": idea,
                "idea": f"I{idea}",
                "patent_id": idea,
                "domain": domain,
                "reviewer_id": ids[reviewer],
                "reviewer": reviewer,
                "background": BACKGROUND.get(reviewer, ""),
                "dimension": dim,
                "score": np.nan if score is None else float(score),
                "status": status,
                "rated_at": pd.Timestamp("2026-01-01", tz="UTC"),
            }
        )
    return pd.DataFrame.from_records(records)


def metrics_of(rows, domain_of=None, **options):
    """compute_metrics of a hand-written frame; no bootstrap unless asked (n_boot)."""
    options.setdefault("n_boot", 0)
    return compute_metrics(frame_from(rows, domain_of), **options)


def cell(metrics, domain="__all__", dimension="d", background="__all__"):
    (found,) = [
        c
        for c in metrics["cells"]
        if (c["domain"], c["dimension"], c["background"]) == (domain, dimension, background)
    ]
    return found
