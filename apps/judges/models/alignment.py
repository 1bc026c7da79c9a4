"""The stored judge alignment (apps/judges/services/alignment.py)."""

from __future__ import annotations

from django.db import models

from apps.core.models import Snapshot, one_queued_per_scope, snapshot_index


class AlignmentSnapshot(Snapshot):
    """One stored computation of the judge alignment for one report source (a scope):
    "auto" (the latest leave-one-out evaluations, every domain), "auto|<domain key>", or
    "run-<id>" (one finished study). Pages, the API and the CSV exports read the newest DONE
    snapshot of their scope; nothing computes alignment in a request.

    `result` holds what the dashboard draws (curves with coverage, coarse alignment, discard
    rates, reasoning, coverage-accuracy curves, models, case ideas); `per_reviewer` holds each
    reviewer's own rows and verdicts under the key "r<id>", read one key at a time by
    "My judge" so the dashboard never loads it; `reasoning_points` holds the full reasoning
    scatter, read only by its CSV.
    """

    scope = models.CharField(max_length=100)
    # The finished runs the computation read (the newest per reviewer scope, or the study).
    run_ids = models.JSONField(default=list, blank=True)
    # finished_at of the newest run it read: a run of the scope finished later makes it stale.
    latest_run_at = models.DateTimeField(null=True, blank=True)
    n_finals = models.PositiveIntegerField(default=0)
    n_predictions = models.PositiveIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)
    per_reviewer = models.JSONField(null=True, blank=True)
    # Every reviewer-pair point of the reasoning structure, per configuration (grows with the
    # square of the reviewers); `result` keeps a sample for the chart, the CSV reads these.
    reasoning_points = models.JSONField(null=True, blank=True)

    class Meta(Snapshot.Meta):
        constraints = [one_queued_per_scope("one_queued_alignment_snapshot_per_scope")]
        indexes = [snapshot_index()]

    def __str__(self) -> str:
        return f"alignment snapshot {self.pk} {self.scope} {self.status}"
