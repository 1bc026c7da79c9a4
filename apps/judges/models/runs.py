"""Judge configurations and runs: the run, its stored plan and leased chunks, the scheduling
requests, the calibration a run fits, and the history of every change.

Runs are the unit of Celery work (apps/judges/services/execution.py).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.core.models import TimestampedModel

LOCAL_LABEL = "Local baseline (not an LLM)"


SIGNAL_CHOICES = [
    ("panel", "Panel (other reviewers' scores)"),
    ("text", "Text (similar examples)"),
    ("level", "Level only"),
]


class JudgeConfig(TimestampedModel):
    class Kind(models.TextChoices):
        ZERO_SHOT = "zero_shot", "Zero-shot"
        AGGREGATE = "aggregate", "Aggregate"
        PERSONALIZED = "personalized", "Personalized"

    class Backend(models.TextChoices):
        OPENAI = "openai", "OpenAI-compatible LLM"
        LOCAL = "local", LOCAL_LABEL

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    backend = models.CharField(max_length=16, choices=Backend.choices, default=Backend.LOCAL)
    model = models.CharField(max_length=200, blank=True, help_text="Empty: settings.LLM_MODEL.")
    base_url = models.URLField(blank=True, help_text="Empty: settings.LLM_BASE_URL.")
    # Few-shot counts evaluated; zero-shot configurations always use k = 0.
    shots = models.JSONField(
        default=list, blank=True, help_text="List of k values, e.g. [0, 1, 2, 5, 9]."
    )
    seeds = models.PositiveSmallIntegerField(default=3)
    temperature = models.FloatField(default=0.0)
    confidence_threshold = models.PositiveSmallIntegerField(default=80)
    min_history = models.PositiveSmallIntegerField(
        default=10, help_text="Scored ratings a reviewer needs in a domain and dimension."
    )
    concurrency = models.PositiveSmallIntegerField(default=4)
    is_active = models.BooleanField(default=True)
    auto = models.BooleanField(
        default=True, help_text="Used by the automatic runs after new ratings."
    )
    # LLM configurations only: add to the prompt the other reviewers' scores on the target idea,
    # mapped onto the target reviewer's scale (never the target's own; engine.panel). Off keeps
    # the paper's three configurations exactly.
    panel_evidence = models.BooleanField(
        default=False,
        help_text="LLM only: show the judge the other reviewers' scores on the idea, "
        "mapped onto this reviewer's scale.",
    )

    class Meta:
        ordering = ["kind", "name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(confidence_threshold__lte=100), name="judge_threshold_0_100"
            ),
            models.CheckConstraint(condition=Q(seeds__gte=1), name="judge_seeds_positive"),
            models.CheckConstraint(
                condition=Q(concurrency__gte=1), name="judge_concurrency_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()}, {self.backend_label})"

    @property
    def backend_label(self) -> str:
        return self.Backend(self.backend).label

    @property
    def k_values(self) -> list[int]:
        if self.kind == self.Kind.ZERO_SHOT:
            return [0]
        values = self.shots if isinstance(self.shots, list) else [self.shots]
        return sorted({int(k) for k in values}) or [0]


class JudgeRun(TimestampedModel):
    class Purpose(models.TextChoices):
        LOO_EVALUATION = "loo_evaluation", "Leave-one-out evaluation"
        PREDICTION = "prediction", "Prediction of unrated ideas"
        STUDY = "study", "Study"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    ACTIVE = (Status.QUEUED, Status.RUNNING)
    # The runs rating changes start by themselves (services.scheduling).
    AUTOMATIC = (Purpose.LOO_EVALUATION, Purpose.PREDICTION)

    purpose = models.CharField(max_length=20, choices=Purpose.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    # Scope: a reviewer (null for studies over every reviewer), a domain, dimension keys.
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="judge_runs",
    )
    domain = models.ForeignKey(
        "catalog.Domain", on_delete=models.CASCADE, related_name="judge_runs"
    )
    dimensions = models.JSONField(default=list)
    configs = models.ManyToManyField(JudgeConfig, related_name="runs")
    shots = models.JSONField(
        default=list, blank=True, help_text="Empty: each configuration's own k values."
    )
    seeds = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Empty: each configuration's own."
    )
    min_history = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Studies: reviewers with fewer scored ratings are skipped."
    )
    backend = models.CharField(
        max_length=16,
        choices=JudgeConfig.Backend.choices,
        blank=True,
        help_text="Empty: each configuration's own backend.",
    )
    # The offline judge's signals for this run: "panel,text" (production: the other reviewers'
    # scores when there are some, the text otherwise) or "text" (a text-only study).
    signals = models.CharField(max_length=20, default="panel,text")
    scope_key = models.CharField(max_length=300)
    # Set when ratings changed while this run was running: it finishes, then a fresh run follows.
    rerun_requested = models.BooleanField(default=False)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    calls = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    tokens_cached = models.PositiveBigIntegerField(default=0)
    estimated_cost = models.DecimalField(max_digits=12, decimal_places=4, default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    error = models.TextField(blank=True)
    # Renewed by the worker executing the run before each batch it stores; a running run whose
    # heartbeat is older than JUDGE_LEASE_SECONDS has lost its worker and is reclaimed.
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # At most one queued or running run per scope: re-triggers reuse it instead.
            models.UniqueConstraint(
                fields=["scope_key"],
                condition=Q(status__in=["queued", "running"]),
                name="one_active_judge_run_per_scope",
            )
        ]
        indexes = [models.Index(fields=["purpose", "status"])]

    def __str__(self) -> str:
        return f"Run {self.pk} ({self.get_purpose_display()}, {self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    @property
    def percent(self) -> int:
        if not self.total:
            return 100 if self.status == self.Status.DONE else 0
        return min(100, round(100 * self.done / self.total))


class JudgeRunPlan(models.Model):
    """What a run judges, fixed when it starts: a resumed run executes this plan, never a newer
    state of the ratings (a run never mixes two states of the data).

    `pool`: per dimension id, the scored ratings the examples are drawn from, as rows
    [rating_id, idea_id, patent_id, reviewer_id, score]; `targets`: per dimension id, the
    [reviewer_id, idea_id] pairs judged. Examples are re-derived from the pool by
    apps.judges.services.planning, deterministically, so they need not be stored. Kept out of
    JudgeRun so that listing runs never loads it.
    """

    run = models.OneToOneField(
        JudgeRun, on_delete=models.CASCADE, primary_key=True, related_name="plan"
    )
    pool = models.JSONField(default=dict)
    targets = models.JSONField(default=dict)
    # The configurations as they were when the run started: [{id, kind, k_values, seeds,
    # backend}], so a configuration edited meanwhile does not change a resumed run.
    configs = models.JSONField(default=list)
    units = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"Plan of run {self.run_id} ({self.units} calls)"


class JudgeRunChunk(models.Model):
    """A slice [start, stop) of a run's work units, claimed by one worker at a time under a lease.

    The lease is the run lock, on every database: a worker owns the chunk while `lease_token` is
    its token and `heartbeat_at` is fresher than JUDGE_LEASE_SECONDS; a chunk whose holder died
    is claimed by the next worker that asks (a conditional UPDATE, see services.execution).
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    # Indexed by the unique key below, which starts with the run.
    run = models.ForeignKey(
        JudgeRun, on_delete=models.CASCADE, related_name="chunks", db_index=False
    )
    index = models.PositiveIntegerField()
    start = models.PositiveIntegerField()
    stop = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    lease_token = models.CharField(max_length=64, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="unique_judge_run_chunk")
        ]

    def __str__(self) -> str:
        return f"Run {self.run_id} chunk {self.index} ({self.status})"


class JudgeScheduleRequest(models.Model):
    """A reviewer's pending judge scheduling (the debounce of issue 9.7).

    At most one QUEUED row per reviewer (partial unique constraint), and one scheduling task is
    sent only when a row is created: a burst of rating writes becomes one task per reviewer.
    `changed_at` is the latest change the row stands for (a run started after it read it).
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"

    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    changed_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["reviewer"],
                condition=Q(status="queued"),
                name="one_queued_judge_schedule_per_reviewer",
            )
        ]

    def __str__(self) -> str:
        return f"Judge scheduling for reviewer {self.reviewer_id} ({self.status})"


class JudgeCalibration(models.Model):
    """The empirical confidence calibration of one scope, fitted on leave-one-out predictions
    (apps.judges.engine.calibration) and applied to later prediction runs of the same scope."""

    domain = models.ForeignKey("catalog.Domain", on_delete=models.CASCADE, related_name="+")
    dimension = models.CharField(max_length=100)
    kind = models.CharField(max_length=16, choices=JudgeConfig.Kind.choices)
    backend = models.CharField(max_length=16, choices=JudgeConfig.Backend.choices)
    fit = models.JSONField(default=dict)
    n = models.PositiveIntegerField(default=0)
    run = models.ForeignKey(
        JudgeRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["domain", "dimension", "kind", "backend"], name="unique_judge_calibration"
            )
        ]

    def __str__(self) -> str:
        return f"Calibration {self.dimension} {self.kind} {self.backend} (n={self.n})"


class JudgeHistory(models.Model):
    """Append-only audit of judge runs and configurations: who changed what, when."""

    class Event(models.TextChoices):
        RUN_STATUS = "run_status", "Run status changed"
        CONFIG_CREATED = "config_created", "Configuration created"
        CONFIG_CHANGED = "config_changed", "Configuration changed"
        CONFIG_DELETED = "config_deleted", "Configuration deleted"

    event = models.CharField(max_length=20, choices=Event.choices)
    run = models.ForeignKey(
        JudgeRun, null=True, blank=True, on_delete=models.CASCADE, related_name="history"
    )
    config = models.ForeignKey(
        JudgeConfig, null=True, blank=True, on_delete=models.SET_NULL, related_name="history"
    )
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now_add=True)
    old_value = models.JSONField(null=True, blank=True)
    new_value = models.JSONField(null=True, blank=True)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["changed_at", "id"]
        verbose_name_plural = "judge history"

    def __str__(self) -> str:
        return f"{self.get_event_display()} at {self.changed_at:%Y-%m-%d %H:%M}"
