"""Personas, the documents they come from, panel runs, debates and every turn of a debate."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.core.models import TimestampedModel

DOCUMENT_MAX_CHARS = 200_000


class PersonaDocument(TimestampedModel):
    """A document an admin uploaded for stakeholder extraction (market report, user research)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    domain = models.ForeignKey("catalog.Domain", on_delete=models.CASCADE, related_name="+")
    title = models.CharField(max_length=200)
    text = models.TextField()
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    stakeholders_found = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.title


class Persona(TimestampedModel):
    """One panel member: who it is and what it cares about. Admins may edit every field."""

    class Source(models.TextChoices):
        DOCUMENTS = "documents", "From documents"
        REVIEWERS = "reviewers", "From a reviewer's history"
        INVENTED = "invented", "Invented from the rubric (control)"

    domain = models.ForeignKey("catalog.Domain", on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=16, choices=Source.choices)
    name = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    # Rubric dimension keys this persona cares about (all, when empty).
    dimensions = models.JSONField(default=list, blank=True)
    # [{"dimension": key, "quote": "...", "document": "title"}]: quotes found in the documents.
    evidence = models.JSONField(default=list, blank=True)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="The reviewer whose history this persona describes (reviewer personas only).",
    )
    active = models.BooleanField(default=True)
    model = models.CharField(max_length=200, blank=True, help_text="The LLM that drafted it.")

    class Meta:
        ordering = ["domain", "source", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["domain", "source", "name"], name="panels_persona_unique_name"
            ),
            models.UniqueConstraint(
                fields=["domain", "reviewer"],
                condition=Q(reviewer__isnull=False),
                name="panels_one_persona_per_reviewer",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.source})"


class PanelRun(TimestampedModel):
    """A panel (the active personas of one source) scoring a set of ideas on some dimensions."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        STOPPED = "stopped", "Stopped at the budget cap"
        FAILED = "failed", "Failed"

    domain = models.ForeignKey("catalog.Domain", on_delete=models.CASCADE, related_name="+")
    persona_source = models.CharField(max_length=16, choices=Persona.Source.choices)
    personas = models.ManyToManyField(Persona, related_name="runs")
    dimension_keys = models.JSONField(default=list)
    max_rounds = models.PositiveSmallIntegerField(default=2)
    budget_tokens = models.PositiveIntegerField(
        help_text="The run stops (status stopped) once its calls have used this many tokens."
    )
    estimate = models.JSONField(default=dict)
    model = models.CharField(max_length=200)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Recomputed from the stored turns when the run ends (never incremented).
    calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    figures = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"panel run {self.pk} ({self.persona_source}, {self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)


class PanelChunk(models.Model):
    """One idea of a run: the unit a worker leases (status RUNNING, token, fresh heartbeat)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    run = models.ForeignKey(PanelRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    idea = models.ForeignKey("catalog.Idea", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    lease_token = models.CharField(max_length=64, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="panels_chunk_unique_index")
        ]

    def __str__(self) -> str:
        return f"chunk {self.index} of panel run {self.run_id} ({self.status})"


class PanelDebate(models.Model):
    """One idea on one dimension: the single judge, the panel before and after debate."""

    run = models.ForeignKey(PanelRun, on_delete=models.CASCADE, related_name="debates")
    idea = models.ForeignKey("catalog.Idea", on_delete=models.CASCADE, related_name="+")
    dimension = models.ForeignKey("screening.Dimension", on_delete=models.CASCADE, related_name="+")
    single_score = models.SmallIntegerField(null=True)
    before_score = models.FloatField(null=True)
    after_score = models.FloatField(null=True)
    stop_reason = models.CharField(max_length=16)
    debate_rounds = models.PositiveSmallIntegerField(default=0)
    # [{member: score}] per round, round 0 = alone; JSON keys are strings.
    rounds = models.JSONField(default=list)
    synthesis = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "idea", "dimension"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "idea", "dimension"], name="panels_one_debate_per_item"
            )
        ]

    def __str__(self) -> str:
        return f"debate {self.idea_id}/{self.dimension_id} of panel run {self.run_id}"


class PanelTurn(models.Model):
    """One model call of a debate, stored as it happened (like a judge prediction).

    (run, idea, dimension, kind, member, round) is unique: a retried chunk finds the turns it
    already paid for and replays them instead of calling the model again."""

    class Kind(models.TextChoices):
        SINGLE = "single", "Single judge"
        SCORE = "score", "Scores alone"
        REVISE = "revise", "Debate round"
        SYNTHESIS = "synthesis", "Synthesis"

    run = models.ForeignKey(PanelRun, on_delete=models.CASCADE, related_name="turns")
    idea = models.ForeignKey("catalog.Idea", on_delete=models.CASCADE, related_name="+")
    dimension = models.ForeignKey("screening.Dimension", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # The persona's id, 0 for the single judge and the synthesis (no FK: 0 must be storable).
    member = models.PositiveIntegerField()
    round = models.PositiveSmallIntegerField()
    score = models.SmallIntegerField(null=True)
    reason = models.TextField(blank=True)
    raw = models.TextField(blank=True)
    error = models.TextField(blank=True)
    prompt_fingerprint = models.CharField(max_length=64)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=1)
    model = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "idea", "dimension", "round", "kind", "member"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "idea", "dimension", "kind", "member", "round"],
                name="panels_one_turn",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} turn of member {self.member}, round {self.round}: {self.score}"
