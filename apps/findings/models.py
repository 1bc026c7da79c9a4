"""Stored results of the findings analysis.

One FindingSnapshot is one run of `compute_findings` over every rationale, at one similarity
threshold, for both sources (reviewers' rationales and judges' reasons, kept apart). Its
`result` holds the light per-domain summaries the findings page reads; the per-idea sections
(each idea's findings, who raised them, the units' text) sit in one FindingSlice per (source,
domain), read only by the idea page, the CSV and the API.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.core.models import Snapshot, one_queued_per_scope, snapshot_index


class Source(models.TextChoices):
    REVIEWERS = "reviewers", "Reviewers' rationales"
    JUDGES = "judges", "Judges' reasons"


def scope_key(*, threshold: float) -> str:
    """The identity of what a snapshot measured: the threshold, e.g. 't=0.5'."""
    return f"t={threshold:g}"


class FindingSnapshot(Snapshot):
    scope = models.CharField(max_length=40)
    threshold = models.FloatField()
    progress = models.PositiveSmallIntegerField(default=0)
    # {"reviewers": {"threshold", "domains": {key: summary without "ideas"}}, "judges": {...}}
    result = models.JSONField(null=True, blank=True)
    n_rationales = models.PositiveIntegerField(null=True, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta(Snapshot.Meta):
        constraints = [
            one_queued_per_scope("one_queued_findings_per_scope"),
            models.CheckConstraint(
                condition=Q(threshold__gt=0) & Q(threshold__lte=1), name="findings_threshold_0_1"
            ),
        ]
        indexes = [snapshot_index()]

    def __str__(self) -> str:
        return f"findings snapshot {self.pk} {self.scope} {self.status}"


class FindingSlice(models.Model):
    snapshot = models.ForeignKey(FindingSnapshot, on_delete=models.CASCADE, related_name="slices")
    source = models.CharField(max_length=16, choices=Source.choices)
    domain = models.CharField(max_length=64)
    # {idea_id: {estimates..., "findings": [{id, name, members, units}]}}
    ideas = models.JSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["snapshot", "source", "domain"], name="one_findings_slice_per_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.source} {self.domain} of findings snapshot {self.snapshot_id}"
