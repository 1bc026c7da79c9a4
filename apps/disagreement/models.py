"""Stored results of the disagreement analysis.

One MetricSnapshot is one run of `compute_metrics` over the ratings of a scope (a measurement
level and an optional date range; domain, dimension and background are views inside every
snapshot). The light parts of the result (cells, spreads, panel sizes, contested ideas) sit in
`result`, so dashboard pages read one small row; the parts that grow with the square of the
number of reviewers (pairwise agreement), with reviewers x dimensions (strictness) and with the
catalogue (the decision board: every idea with its scores and predictions) are split into
MetricSlice rows per (domain, dimension), loaded only by the page that draws them.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.core.models import Snapshot, one_queued_per_scope, snapshot_index


class Level(models.TextChoices):
    ORDINAL = "ordinal", "Ordinal"
    NOMINAL = "nominal", "Nominal"
    INTERVAL = "interval", "Interval"
    RATIO = "ratio", "Ratio"


def scope_key(
    *,
    level: str,
    since: dt.date | None = None,
    until: dt.date | None = None,
    include_categories: bool = False,
) -> str:
    """The identity of what a snapshot measured: 'ordinal', 'ordinal|2025-01-01|2025-03-31',
    and '+categories' appended when category levels were counted as the lowest grade."""
    key = level
    if since is not None or until is not None:
        key = f"{level}|{since.isoformat() if since else ''}|{until.isoformat() if until else ''}"
    return key + ("+categories" if include_categories else "")


class MetricSnapshot(Snapshot):
    scope = models.CharField(max_length=100)
    level = models.CharField(max_length=16, choices=Level.choices, default=Level.ORDINAL)
    since = models.DateField(null=True, blank=True)
    until = models.DateField(null=True, blank=True)
    # False (the default): category levels such as PBIG's "not B2B" are left out of the ordinal
    # figures and reported apart; True: counted as the lowest grade (the manager's switch).
    include_categories = models.BooleanField(default=False)
    progress = models.PositiveSmallIntegerField(default=0)
    # The contract's dict without "strictness" and "pairwise" (those live in MetricSlice rows).
    result = models.JSONField(null=True, blank=True)
    n_ratings = models.PositiveIntegerField(null=True, blank=True)
    # The newest rating change the computation saw: ratings changed later make it stale.
    latest_rating_at = models.DateTimeField(null=True, blank=True)
    # Null for the automatic recomputes that follow rating changes.
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta(Snapshot.Meta):
        constraints = [
            one_queued_per_scope("one_queued_snapshot_per_scope"),
            models.CheckConstraint(
                condition=Q(progress__gte=0) & Q(progress__lte=100), name="snapshot_progress_0_100"
            ),
        ]
        indexes = [snapshot_index()]

    def __str__(self) -> str:
        return f"snapshot {self.pk} {self.scope} {self.status}"


class MetricSlice(models.Model):
    class Kind(models.TextChoices):
        STRICTNESS = "strictness", "Strictness"
        PAIRWISE = "pairwise", "Pairwise agreement"
        BOARD = "board", "Decision board"

    snapshot = models.ForeignKey(MetricSnapshot, on_delete=models.CASCADE, related_name="slices")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    domain = models.CharField(max_length=64)
    dimension = models.CharField(max_length=64)
    rows = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["snapshot", "kind", "domain", "dimension"], name="one_slice_per_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.domain}/{self.dimension} of snapshot {self.snapshot_id}"
