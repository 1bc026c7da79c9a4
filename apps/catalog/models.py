from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from apps.core.models import TimestampedModel


class Domain(models.Model):
    key = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    # Ideas in this domain are rated on this rubric; empty means the default rubric.
    rubric = models.ForeignKey(
        "screening.Rubric", null=True, blank=True, on_delete=models.PROTECT, related_name="domains"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


# Real composite keys ("corpus/split/document-id/variant") run long.
EXTERNAL_ID_MAX = 255
# Characters of the description shown in place of a missing title.
EXCERPT_CHARS = 80


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The start of a text on one line, cut on a word boundary and marked with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0] or flat[:limit]
    return cut.rstrip(".,;:") + "…"


class Patent(TimestampedModel):
    external_id = models.CharField(max_length=EXTERNAL_ID_MAX, unique=True)
    domain = models.ForeignKey(Domain, on_delete=models.PROTECT, related_name="patents")
    title = models.CharField(max_length=500)
    abstract = models.TextField(blank=True)
    claims = models.TextField(blank=True)

    class Meta:
        ordering = ["external_id"]

    def __str__(self) -> str:
        return f"{self.external_id}: {self.title}"


# The one rule on an idea's text, shared by the API and the Django admin (Idea.clean), the ideas
# importer and the restore (which accepts ideas stored before the rule was enforced everywhere,
# with a note: apps.catalog.importers.ideas).
IDEA_TEXT_REQUIRED = "is empty and so is the description: an idea needs one of them"


def idea_lacks_text(title: str, description: str) -> bool:
    """Whether an idea has neither a title nor a description (whitespace counts as nothing)."""
    return not title.strip() and not description.strip()


class Idea(TimestampedModel):
    external_id = models.CharField(max_length=EXTERNAL_ID_MAX, unique=True)
    patent = models.ForeignKey(Patent, on_delete=models.PROTECT, related_name="ideas")
    # Optional: rated items without a natural title (arguments, summaries) show an excerpt.
    title = models.CharField(max_length=500, blank=True)
    description = models.TextField(blank=True)
    implementation = models.TextField(blank=True)
    differentiation = models.TextField(blank=True)
    source = models.CharField(max_length=200, blank=True, help_text="The system that generated it.")

    class Meta:
        ordering = ["external_id"]

    def __str__(self) -> str:
        return f"{self.external_id}: {self.display_title}"

    def clean(self) -> None:
        if idea_lacks_text(self.title, self.description):
            raise ValidationError({"title": IDEA_TEXT_REQUIRED})

    @property
    def display_title(self) -> str:
        """What pages show as the idea's title: the title, else a short excerpt of the
        description, else the external id."""
        return self.title.strip() or excerpt(self.description) or self.external_id


class ImportJob(TimestampedModel):
    """An uploaded file imported by the worker instead of inside the web request (issue 29.2):
    an upload above IMPORT_BACKGROUND_BYTES is written to a spool file, this row says what to do
    with it, and the worker calls the same `import_file` the synchronous path calls.

    The outcome is stored in the same transaction as the import (apps.catalog.services.
    import_jobs), so the job says "succeeded" exactly when the records are stored. Progress and
    the heartbeat are written from another connection while the import's transaction is open.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    kind = models.CharField(max_length=32)
    # dry_run, make_default, domains, create_domains: the arguments of import_file.
    options = models.JSONField(default=dict)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="import_jobs"
    )
    filename = models.CharField(max_length=255)
    size = models.BigIntegerField(help_text="Bytes of the uploaded file.")
    # The spool file's name inside IMPORT_SPOOL_DIR; "" once it is deleted.
    spool_name = models.CharField(max_length=100, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    # Bytes of the file the import has read in its current pass, 0 to `size`.
    bytes_read = models.BigIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=0)
    lease_token = models.CharField(max_length=32, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # ImportResult.as_dict() plus its summary, once succeeded.
    result = models.JSONField(null=True, blank=True)
    # Why it failed, and every FieldError (as_dict) of the refusal.
    message = models.TextField(blank=True)
    errors = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=["queued", "running", "succeeded", "failed"]),
                name="import_job_status_known",
            )
        ]

    def __str__(self) -> str:
        return f"import {self.kind} {self.filename} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    @property
    def percent_read(self) -> int:
        if not self.size:
            return 0
        return min(100, int(100 * self.bytes_read / self.size))
