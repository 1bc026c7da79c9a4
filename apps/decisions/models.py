"""Stored results of the decision model and the routing it suggests.

A DecisionSnapshot is one fit of the model (apps/decisions/ranking) over every rating and the
judges' latest predictions; its board rows sit in DecisionSlice rows per (domain, dimension) so
the Decide page loads one domain's ranking only. RoutingSuggestion rows are the reads the same
fit proposes; an admin accepts them (they become assignments carrying their reason) or a
domain's automatic routing does.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.core.models import Snapshot, one_queued_per_scope, snapshot_index


class DecisionSnapshot(Snapshot):
    # One scope today ("all"): the model reads every rating. Kept as a field so the debounce's
    # one-queued-row constraint reads like the metrics snapshot's.
    scope = models.CharField(max_length=100, default="all")
    progress = models.PositiveSmallIntegerField(default=0)
    # Summary: the shortlist share, the dimensions, each fit's mu / sigma / tau, the counts.
    result = models.JSONField(null=True, blank=True)
    n_ratings = models.PositiveIntegerField(null=True, blank=True)
    n_predictions = models.PositiveIntegerField(null=True, blank=True)
    latest_rating_at = models.DateTimeField(null=True, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta(Snapshot.Meta):
        constraints = [
            one_queued_per_scope("one_queued_decision_snapshot"),
            models.CheckConstraint(
                condition=Q(progress__gte=0) & Q(progress__lte=100),
                name="decision_snapshot_progress_0_100",
            ),
        ]
        indexes = [snapshot_index()]

    def __str__(self) -> str:
        return f"decision snapshot {self.pk} {self.status}"


class DecisionSlice(models.Model):
    """The board rows of one (domain, dimension) ranking; dimension "__all__" is overall.

    ``rows`` holds them as columns (ranking/rows.py: domain_slices; read them through
    slice_rows, which also reads the list of row dicts that snapshots stored before).
    ``evidence``: "all" (the board: people, the text model and independent judges where their
    checks pass) or "people" (the same model fitted on people's reads only)."""

    class Evidence(models.TextChoices):
        ALL = "all", "People, text model and judges"
        PEOPLE = "people", "People's reads only"

    snapshot = models.ForeignKey(DecisionSnapshot, on_delete=models.CASCADE, related_name="slices")
    domain = models.CharField(max_length=64)
    dimension = models.CharField(max_length=64)
    evidence = models.CharField(max_length=8, choices=Evidence.choices, default=Evidence.ALL)
    rows = models.JSONField(default=list)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["snapshot", "domain", "dimension", "evidence"],
                name="one_decision_slice_per_key_and_evidence",
            )
        ]

    def __str__(self) -> str:
        return f"{self.domain}/{self.dimension} of decision snapshot {self.snapshot_id}"


class RoutingSuggestion(models.Model):
    """A read the model proposes: this reviewer, this idea, and why."""

    class Kind(models.TextChoices):
        MIN_READS = "min_reads", "Below the minimum of human reads"
        BOUNDARY = "boundary", "Near the shortlist's cut"
        RANDOM = "random", "Random pick"

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ACCEPTED = "accepted", "Accepted"
        SUPERSEDED = "superseded", "Superseded"

    snapshot = models.ForeignKey(
        DecisionSnapshot, null=True, on_delete=models.SET_NULL, related_name="suggestions"
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="routing_suggestions"
    )
    idea = models.ForeignKey("catalog.Idea", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    value = models.FloatField(default=0)
    reason = models.TextField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-value", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["reviewer", "idea"],
                condition=Q(status="open"),
                name="one_open_suggestion_per_pair",
            )
        ]

    def __str__(self) -> str:
        return f"suggest {self.idea_id} to {self.reviewer_id} ({self.kind}, {self.status})"


class DomainRouting(models.Model):
    """Per domain: whether the model's suggestions become assignments without an admin."""

    domain = models.OneToOneField("catalog.Domain", on_delete=models.CASCADE, related_name="+")
    automatic = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"routing of domain {self.domain_id}: {'automatic' if self.automatic else 'manual'}"


class DomainShortlist(models.Model):
    """Per domain: how many ideas the shortlist holds (the cut on Decide, the memo's choice).

    A domain without a row uses DEFAULT_SHORTLIST_SIZE (settings.DECISIONS_SHORTLIST_SIZE)."""

    domain = models.OneToOneField("catalog.Domain", on_delete=models.CASCADE, related_name="+")
    size = models.PositiveIntegerField(default=10)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(size__gte=1) & Q(size__lte=10_000), name="shortlist_size_1_10000"
            )
        ]

    def __str__(self) -> str:
        return f"shortlist of domain {self.domain_id}: {self.size}"


class DecisionMark(models.Model):
    """One version of a manager's decision on one idea: append-only, never updated.

    The idea's current mark is its highest ``version``; every earlier one stays as history.
    ``figures`` keeps the board as the decider saw it (snapshot id and time, rank, estimate,
    interval, P(top N) and N), so the record still means what it meant after later recomputes
    and after the snapshot itself is pruned.
    """

    class Mark(models.TextChoices):
        TAKE_FORWARD = "take_forward", "Take forward"
        HOLD = "hold", "Hold"
        REJECT = "reject", "Reject"

    idea = models.ForeignKey("catalog.Idea", on_delete=models.CASCADE, related_name="+")
    domain = models.ForeignKey("catalog.Domain", on_delete=models.CASCADE, related_name="+")
    version = models.PositiveIntegerField()
    mark = models.CharField(max_length=16, choices=Mark.choices)
    note = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField()
    # The board as the decider saw it; figures["id"] names the snapshot. No foreign key on
    # purpose: snapshots are derived and pruned (and not carried by a backup), the record stays.
    figures = models.JSONField(default=dict)

    class Meta:
        ordering = ["idea_id", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["idea", "version"], name="one_decision_mark_version"),
            models.CheckConstraint(
                condition=Q(mark__in=["take_forward", "hold", "reject"]),
                name="decision_mark_known",
            ),
        ]
        indexes = [models.Index(fields=["domain", "idea", "-version"])]

    def __str__(self) -> str:
        return f"{self.mark} on idea {self.idea_id} (v{self.version})"
