from django.db import models


class TimestampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


# The order in which stored snapshots (metrics, judge alignment) are "newest": by when a worker
# claimed them and read their data (started_at), not by when they finished. Two claimed one after
# the other may finish in the other order, and the dashboard would then show the older data.
SNAPSHOT_NEWEST_FIRST = (models.F("started_at").desc(nulls_last=True), "-id")


class Snapshot(models.Model):
    """The fields every stored snapshot kind shares (apps/core/snapshots.py has the rules).

    A kind adds its ``scope`` (its length is its own), its inputs and results, and its Meta with
    ``one_queued_per_scope`` among the constraints: the debounce rests on that constraint.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)


def one_queued_per_scope(name: str) -> models.UniqueConstraint:
    """At most one waiting computation per scope: a burst of changes collapses into the single
    queued row that will read them all (the debounce)."""
    return models.UniqueConstraint(fields=["scope"], condition=models.Q(status="queued"), name=name)


def snapshot_index() -> models.Index:
    """The index the pages' "newest finished snapshot of this scope" reads."""
    return models.Index(fields=["scope", "status", "-computed_at"])
