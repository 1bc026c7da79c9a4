from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from apps.core.models import TimestampedModel
from apps.screening.gates import DimensionRule


class Rubric(TimestampedModel):
    key = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    is_default = models.BooleanField(default=False)
    # The rubric's own words for the judge prompts; empty means PBIG's wording (see
    # apps.judges.engine.prompting.PromptWording).
    task = models.TextField(
        blank=True, help_text="What the raters do, e.g. 'You assess arguments on a topic.'"
    )
    item_noun = models.CharField(
        max_length=100, blank=True, help_text="What is rated, e.g. 'argument' (default: idea)."
    )
    source_noun = models.CharField(
        max_length=100,
        blank=True,
        help_text="What it is based on, e.g. 'topic' (default: patent).",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"], condition=Q(is_default=True), name="one_default_rubric"
            )
        ]

    def __str__(self) -> str:
        return self.name

    def rules(self) -> list[DimensionRule]:
        return [d.rule() for d in self.dimensions.all()]


class Dimension(models.Model):
    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="dimensions")
    key = models.SlugField(max_length=64)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField()
    scale_min = models.SmallIntegerField()
    scale_max = models.SmallIntegerField()
    # {"1": "meaning of level 1", ...}; keys are strings because JSON object keys are.
    levels = models.JSONField(default=dict)
    # The dimension passes its gate when score > pass_above; null means it gates nothing.
    pass_above = models.SmallIntegerField(null=True, blank=True)
    # Keys of earlier dimensions that must all pass before this one opens.
    requires = models.JSONField(default=list, blank=True)
    # Levels that are categories rather than grades (PBIG: 0 = "not a B2B product").
    categories = models.JSONField(default=list, blank=True)
    # Yes/no questions whose answers determine the score, e.g. competitive advantage.
    questions = models.JSONField(default=list, blank=True)
    question_scores = models.JSONField(default=dict, blank=True)
    # An optional dimension may be left unanswered even when its gates are open (real rating
    # sets have gaps); that is stored as Rating.Status.NOT_ANSWERED.
    optional = models.BooleanField(default=False)

    class Meta:
        ordering = ["rubric", "position"]
        constraints = [
            models.UniqueConstraint(fields=["rubric", "key"], name="unique_dimension_key"),
            models.CheckConstraint(
                condition=Q(scale_min__lt=models.F("scale_max")), name="dimension_scale_ordered"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def rule(self) -> DimensionRule:
        return DimensionRule(
            key=self.key,
            scale_min=self.scale_min,
            scale_max=self.scale_max,
            pass_above=self.pass_above,
            requires=tuple(self.requires),
            question_keys=tuple(q["key"] for q in self.questions),
            question_scores=dict(self.question_scores),
            name=self.name,
            optional=self.optional,
        )

    @property
    def scale(self) -> range:
        return range(self.scale_min, self.scale_max + 1)

    def level_meaning(self, score: int) -> str:
        return str(self.levels.get(str(score), ""))

    def level_choices(self) -> list[tuple[int, str]]:
        return [(s, self.level_meaning(s)) for s in self.scale]


class Assignment(TimestampedModel):
    class Status(models.TextChoices):
        PENDING = "pending", "To rate"
        COMPLETED = "completed", "Rated"
        DECLINED = "declined", "Declined"

    # No index of its own: unique_assignment and the (reviewer, status) index both lead with it,
    # and every index is one more write per assignment.
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="assignments",
        db_index=False,
    )
    idea = models.ForeignKey("catalog.Idea", on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decline_reason = models.TextField(blank=True)
    # Why the idea was put in this reviewer's queue, when a routing suggestion did it (the
    # decisions app writes it; the queue shows it to the reviewer). Blank for hand and balanced
    # assignments.
    reason = models.TextField(blank=True, default="", db_default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["reviewer", "idea"], name="unique_assignment")
        ]
        indexes = [models.Index(fields=["reviewer", "status"])]


class Rating(TimestampedModel):
    class Status(models.TextChoices):
        SCORED = "scored", "Scored"
        NOT_RATED_BY_DESIGN = "gated", "Not rated by design"
        DECLINED = "declined", "Declined"
        # An optional dimension left blank: missing in analyses, named in the UI and exports.
        NOT_ANSWERED = "unanswered", "Not answered"

    class Source(models.TextChoices):
        FORM = "form", "Form"
        API = "api", "API"
        IMPORT = "import", "Import"

    # Reviewer and dimension have no index of their own: one_rating_per_dimension leads with the
    # reviewer and the (dimension, idea) index with the dimension, and every index is one more
    # write per rating (a million on a large import).
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ratings", db_index=False
    )
    idea = models.ForeignKey("catalog.Idea", on_delete=models.CASCADE, related_name="ratings")
    dimension = models.ForeignKey(
        Dimension, on_delete=models.CASCADE, related_name="ratings", db_index=False
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SCORED)
    score = models.SmallIntegerField(null=True, blank=True)
    # Answers to the dimension's yes/no questions, e.g. {"hard_to_imitate": true, ...}.
    answers = models.JSONField(null=True, blank=True)
    rationale = models.TextField(blank=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.FORM)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["reviewer", "idea", "dimension"], name="one_rating_per_dimension"
            ),
            models.CheckConstraint(
                condition=(Q(status="scored") & Q(score__isnull=False))
                | (~Q(status="scored") & Q(score__isnull=True)),
                name="score_iff_scored",
            ),
        ]
        indexes = [models.Index(fields=["dimension", "idea"])]

    def __str__(self) -> str:
        return f"{self.reviewer_id}/{self.idea_id}/{self.dimension_id}: {self.score}"


class RatingHistory(models.Model):
    """Append-only: one row for every change to a rating, including its creation."""

    rating = models.ForeignKey(Rating, on_delete=models.CASCADE, related_name="history")
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now_add=True)
    source = models.CharField(max_length=16, choices=Rating.Source.choices)
    old_status = models.CharField(max_length=16, blank=True)
    old_score = models.SmallIntegerField(null=True)
    old_answers = models.JSONField(null=True)
    old_rationale = models.TextField(blank=True)
    new_status = models.CharField(max_length=16)
    new_score = models.SmallIntegerField(null=True)
    new_answers = models.JSONField(null=True)
    new_rationale = models.TextField(blank=True)

    class Meta:
        ordering = ["changed_at", "id"]

    def __str__(self) -> str:
        return f"rating {self.rating_id} {self.old_status or '-'} -> {self.new_status}"
