"""What runs produce: per-seed predictions, final (majority-vote) predictions and the stored
shortlists.

Predictions are written under a unique key so a task that runs twice (redelivery after a crash)
upserts the same rows instead of adding new ones.

References without a database constraint. A refresh writes millions of per-seed predictions
and finals, and PostgreSQL checks a deferred foreign key once per row when the transaction
commits: on 200,000 of the 10x refresh's prediction rows, the five checks took 3.4 s, more
than inserting the rows (2.3 s). So in these two tables only the run keeps its constraint (a
row belongs to its run, and goes with it). The reviewer, idea, dimension and configuration
are the ones the run's plan read from the database, and Django, not the database, deletes
the rows of a deleted reviewer, idea or dimension (on_delete), as before. What the
constraints still guarded was a race: one of those deleted (an admin action) while a run
writes rows for it. A finishing run deletes such rows before voting its finals
(services.prediction_store.forget_deleted_references). The dimension has no index of its
own: every read of these rows goes through the run, whose unique key leads, and a rubric
dimension is rarely deleted (its rows are then found by a scan).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.judges.models.runs import SIGNAL_CHOICES, JudgeConfig, JudgeRun


class JudgePrediction(models.Model):
    """One judge call's outcome (one seed). Upserted under its unique key."""

    # No index of its own: the unique key below starts with the run, and serves every lookup
    # and cascade by run (one index entry fewer for each of a refresh's millions of rows).
    run = models.ForeignKey(
        JudgeRun, on_delete=models.CASCADE, related_name="predictions", db_index=False
    )
    # No database constraint on the references below, nor an index on the dimension (module
    # docstring).
    config = models.ForeignKey(
        JudgeConfig,
        null=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
    )
    kind = models.CharField(max_length=16, choices=JudgeConfig.Kind.choices)
    k = models.PositiveSmallIntegerField()
    seed = models.PositiveSmallIntegerField()
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    idea = models.ForeignKey(
        "catalog.Idea",
        on_delete=models.CASCADE,
        related_name="judge_predictions",
        db_constraint=False,
    )
    dimension = models.ForeignKey(
        "screening.Dimension",
        on_delete=models.CASCADE,
        related_name="+",
        db_constraint=False,
        db_index=False,
    )
    score = models.SmallIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True)
    confidence = models.SmallIntegerField(null=True, blank=True)
    # The backend's own confidence before calibration (confidence is the calibrated one).
    raw_confidence = models.SmallIntegerField(null=True, blank=True)
    # Where the prediction came from (panel | text | level; empty for LLMs) and how many other
    # reviewers' scores a panel prediction rests on (apps.judges.engine.panel).
    signal = models.CharField(max_length=8, blank=True, choices=SIGNAL_CHOICES)
    panel_size = models.PositiveSmallIntegerField(default=0)
    # The level-only baseline on the same target: the mean of the examples' scores, rounded
    # (engine.panel.level_only); null without examples (zero-shot).
    level_score = models.SmallIntegerField(null=True, blank=True)
    model = models.CharField(max_length=200, blank=True)
    backend = models.CharField(max_length=16, choices=JudgeConfig.Backend.choices)
    # How the reply was constrained: json_schema, json_object or text (LLM); empty for local.
    response_mode = models.CharField(max_length=16, blank=True)
    prompt_fingerprint = models.CharField(max_length=64, blank=True)
    example_rating_ids = models.JSONField(default=list, blank=True)
    raw_reply = models.TextField(blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cached_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "reviewer", "idea", "dimension", "kind", "k", "seed"],
                name="unique_judge_prediction",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} k={self.k} seed={self.seed}: {self.score}"


class JudgeFinal(models.Model):
    """Majority vote over the kept seed predictions of one target (postprocess.aggregate_seeds)."""

    # Indexed by the unique key below, which starts with the run.
    run = models.ForeignKey(
        JudgeRun, on_delete=models.CASCADE, related_name="finals", db_index=False
    )
    kind = models.CharField(max_length=16, choices=JudgeConfig.Kind.choices)
    k = models.PositiveSmallIntegerField()
    # As JudgePrediction's: no database constraint on these three (module docstring).
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    idea = models.ForeignKey(
        "catalog.Idea", on_delete=models.CASCADE, related_name="judge_finals", db_constraint=False
    )
    dimension = models.ForeignKey(
        "screening.Dimension",
        on_delete=models.CASCADE,
        related_name="+",
        db_constraint=False,
        db_index=False,
    )
    score = models.SmallIntegerField(null=True, blank=True)
    # Mean confidence and one reason of the kept predictions that voted for the final score.
    confidence = models.SmallIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True)
    kept = models.PositiveSmallIntegerField(default=0)
    discarded = models.PositiveSmallIntegerField(default=0)
    failed = models.PositiveSmallIntegerField(default=0)
    # The signal and panel size of the votes for the final score (see JudgePrediction).
    signal = models.CharField(max_length=8, blank=True, choices=SIGNAL_CHOICES)
    panel_size = models.PositiveSmallIntegerField(default=0)
    # The level-only baseline of the target: the seeds' level scores averaged and rounded.
    level_score = models.SmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "reviewer", "idea", "dimension", "kind", "k"],
                name="unique_judge_final",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} k={self.k}: {self.score}"


class JudgeShortlist(models.Model):
    """One idea of a reviewer's shortlist, stored when a prediction run finishes
    (services.execution), so pages and exports read it and never rank per request.

    Per reviewer and domain (the run's), the top JUDGE_SHORTLIST_SIZE unread ideas by
    predicted score, ties broken by confidence then idea id: one list per dimension, and one
    over all dimensions (``dimension`` null) ranked by the mean position of the predictions on
    their scales (0 = bottom, 1 = top), which is then its ``predicted_score``."""

    # Indexed by the unique key below, which starts with the run.
    run = models.ForeignKey(
        JudgeRun, on_delete=models.CASCADE, related_name="shortlist", db_index=False
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    domain = models.ForeignKey("catalog.Domain", on_delete=models.CASCADE, related_name="+")
    dimension = models.ForeignKey(
        "screening.Dimension", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    idea = models.ForeignKey("catalog.Idea", on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveSmallIntegerField()
    predicted_score = models.FloatField()
    confidence = models.SmallIntegerField(null=True, blank=True)
    signal = models.CharField(max_length=8, blank=True, choices=SIGNAL_CHOICES)
    panel_size = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["reviewer_id", "dimension_id", "rank"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "dimension", "rank"],
                name="unique_judge_shortlist_rank",
                nulls_distinct=False,
            )
        ]

    def __str__(self) -> str:
        return f"shortlist #{self.rank} of run {self.run_id}: idea {self.idea_id}"


class PanelShortlist(models.Model):
    """One idea of a domain's panel shortlist (engine.shortlist.panel_shortlists): the top
    JUDGE_SHORTLIST_SIZE ideas that most of the domain's reviewers have not read, by the mean
    of their judges' predictions; one list per dimension and one over all dimensions
    (``dimension`` null). Stored when a prediction run of the domain finishes, read by the
    predictions page and the shortlists CSV (managers only: it averages every reviewer's
    predictions)."""

    domain = models.ForeignKey("catalog.Domain", on_delete=models.CASCADE, related_name="+")
    dimension = models.ForeignKey(
        "screening.Dimension", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    idea = models.ForeignKey("catalog.Idea", on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveSmallIntegerField()
    predicted_score = models.FloatField()
    confidence = models.SmallIntegerField(null=True, blank=True)
    signal = models.CharField(max_length=8, blank=True, choices=SIGNAL_CHOICES)
    # Reviewers whose predictions are averaged (the most over dimensions for the overall list).
    panel_size = models.PositiveSmallIntegerField(default=0)
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["domain_id", "dimension_id", "rank"]
        constraints = [
            models.UniqueConstraint(
                fields=["domain", "dimension", "rank"],
                name="unique_panel_shortlist_rank",
                nulls_distinct=False,
            )
        ]

    def __str__(self) -> str:
        return f"panel shortlist #{self.rank} of domain {self.domain_id}: idea {self.idea_id}"
