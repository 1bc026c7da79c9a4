"""Input and output shapes of the screening API. Serializers validate and format, never save."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.accounts.models import User
from apps.catalog.models import Domain, Idea
from apps.core import fields
from apps.core.api import id_field
from apps.screening.models import Assignment, Dimension, Rating, RatingHistory, Rubric
from apps.screening.rubric_files import DIMENSION_FIELDS, WORDING_FIELDS


# ---- rubrics ---------------------------------------------------------------------------------
class QuestionOutputSerializer(serializers.Serializer):
    key = serializers.CharField()
    text = serializers.CharField()


class DimensionOutputSerializer(serializers.ModelSerializer):
    levels = serializers.DictField(
        child=serializers.CharField(), help_text="Meaning of every level."
    )
    requires = serializers.ListField(
        child=serializers.CharField(), help_text="Dimensions that must pass before this one opens."
    )
    categories = serializers.ListField(
        child=serializers.IntegerField(), help_text="Levels that are categories, not grades."
    )
    questions = QuestionOutputSerializer(many=True)
    question_scores = serializers.DictField(
        child=serializers.IntegerField(),
        help_text='Score for each answer combination, e.g. "yes,no".',
    )

    class Meta:
        model = Dimension
        fields = ["key", *DIMENSION_FIELDS]


class RubricOutputSerializer(serializers.ModelSerializer):
    dimensions = DimensionOutputSerializer(many=True)
    domains: serializers.SlugRelatedField[Domain] = serializers.SlugRelatedField(
        slug_field="key", many=True, read_only=True, help_text="Domains rated on this rubric."
    )

    class Meta:
        model = Rubric
        fields = [
            "id",
            "key",
            "name",
            "description",
            "is_default",
            *WORDING_FIELDS,
            "domains",
            "dimensions",
        ]


# ---- ratings ---------------------------------------------------------------------------------
class RatingOutputSerializer(serializers.ModelSerializer):
    reviewer = serializers.IntegerField(source="reviewer_id")
    reviewer_username = serializers.CharField(source="reviewer.username")
    idea = serializers.IntegerField(source="idea_id")
    idea_external_id = serializers.CharField(source="idea.external_id")
    domain = serializers.CharField(source="idea.patent.domain.key")
    dimension = serializers.CharField(source="dimension.key")
    answers = serializers.DictField(child=serializers.BooleanField(), allow_null=True)

    class Meta:
        model = Rating
        fields = [
            "id",
            "reviewer",
            "reviewer_username",
            "idea",
            "idea_external_id",
            "domain",
            "dimension",
            "status",
            "score",
            "answers",
            "rationale",
            "source",
            "created_at",
            "updated_at",
        ]


class RatingFilterSerializer(serializers.Serializer):
    """Query parameters of GET /api/ratings/ (CharFields refuse NUL characters)."""

    reviewer = serializers.RegexField(
        r"^(?:[0-9]{1,18}|[\w.@+-]{1,150})$",
        required=False,
        allow_blank=True,
        help_text="Reviewer id or username (managers and admins).",
    )
    idea = id_field(required=False, help_text="Idea id.")
    domain = serializers.CharField(required=False, allow_blank=True, max_length=64)
    dimension = serializers.CharField(required=False, allow_blank=True, max_length=64)
    status = serializers.ChoiceField(
        choices=Rating.Status.choices, required=False, allow_blank=True, help_text="Rating status."
    )

    class Meta:
        ref_name = "RatingFilter"


class RatingHistoryOutputSerializer(serializers.ModelSerializer):
    changed_by = serializers.CharField(source="changed_by.username", allow_null=True, default=None)
    old_answers = serializers.DictField(child=serializers.BooleanField(), allow_null=True)
    new_answers = serializers.DictField(child=serializers.BooleanField(), allow_null=True)

    class Meta:
        model = RatingHistory
        fields = [
            "id",
            "changed_by",
            "changed_at",
            "source",
            "old_status",
            "old_score",
            "old_answers",
            "old_rationale",
            "new_status",
            "new_score",
            "new_answers",
            "new_rationale",
        ]


class MyRatingInputSerializer(serializers.Serializer):
    scores = serializers.DictField(
        child=serializers.IntegerField(allow_null=True),
        help_text="Score per dimension key. Leave closed stages out (or null); an optional "
        "dimension left out (or null) while open is stored as not answered.",
    )
    answers = serializers.DictField(
        child=serializers.DictField(child=serializers.BooleanField(allow_null=True)),
        required=False,
        help_text="Yes/no answers per question-based dimension, e.g. "
        '{"competitive_advantage": {"hard_to_imitate": true, "technology_essential": false}}.',
    )
    rationales = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=5000),
        required=False,
        help_text="Optional free-text reason per dimension key.",
    )


class MyRatingOutputSerializer(serializers.Serializer):
    idea = serializers.IntegerField()
    idea_external_id = serializers.CharField()
    rubric = serializers.CharField()
    assignment_status = serializers.CharField()
    decline_reason = serializers.CharField(allow_blank=True)
    open_dimensions = serializers.ListField(child=serializers.CharField())
    scores = serializers.DictField(child=serializers.IntegerField(allow_null=True))
    statuses = serializers.DictField(child=serializers.CharField())
    answers = serializers.DictField(child=serializers.DictField(child=serializers.BooleanField()))
    rationales = serializers.DictField(child=serializers.CharField(allow_blank=True))
    ratings = RatingOutputSerializer(many=True)


class DeclineInputSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")


# ---- assignments -----------------------------------------------------------------------------
class AssignmentOutputSerializer(serializers.ModelSerializer):
    reviewer = serializers.IntegerField(source="reviewer_id")
    reviewer_username = serializers.CharField(source="reviewer.username")
    idea = serializers.IntegerField(source="idea_id")
    idea_external_id = serializers.CharField(source="idea.external_id")
    idea_title = serializers.CharField(
        source="idea.display_title", help_text="The title, or an excerpt when it has none."
    )
    domain = serializers.CharField(source="idea.patent.domain.key")
    assigned_by = serializers.CharField(
        source="assigned_by.username", allow_null=True, default=None
    )

    class Meta:
        model = Assignment
        fields = [
            "id",
            "reviewer",
            "reviewer_username",
            "idea",
            "idea_external_id",
            "idea_title",
            "domain",
            "status",
            "decline_reason",
            "assigned_by",
            "created_at",
            "updated_at",
        ]


class AssignmentFilterSerializer(serializers.Serializer):
    """Query parameters of GET /api/assignments/."""

    reviewer = id_field(required=False, help_text="Reviewer id.")
    idea = id_field(required=False, help_text="Idea id.")
    domain = serializers.CharField(
        required=False, allow_blank=True, max_length=64, help_text="Domain key."
    )
    status = serializers.ChoiceField(
        choices=Assignment.Status.choices, required=False, allow_blank=True
    )

    class Meta:
        ref_name = "AssignmentFilter"


class MyAssignmentFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=Assignment.Status.choices, required=False, allow_blank=True
    )

    class Meta:
        ref_name = "MyAssignmentFilter"


class DomainFilterSerializer(serializers.Serializer):
    domain = serializers.CharField(
        required=False, allow_blank=True, max_length=64, help_text="Domain key."
    )

    class Meta:
        ref_name = "DomainFilter"


class AssignmentCreateInputSerializer(serializers.Serializer):
    reviewer = fields.SlugRelatedField(
        slug_field="username", queryset=User.objects.all(), help_text="The reviewer's username."
    )
    idea = serializers.PrimaryKeyRelatedField(
        queryset=Idea.objects.select_related("patent__domain"),
        required=False,
        help_text="One idea id.",
    )
    ideas = serializers.PrimaryKeyRelatedField(
        queryset=Idea.objects.select_related("patent__domain"),
        many=True,
        required=False,
        help_text="Several idea ids (instead of idea).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("idea" in attrs) == ("ideas" in attrs):
            raise serializers.ValidationError({"idea": "give either idea or ideas"})
        return attrs


class AssignmentCreateOutputSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    assignments = AssignmentOutputSerializer(many=True)


class AssignmentBulkBalancedInputSerializer(serializers.Serializer):
    domain = fields.SlugRelatedField(slug_field="key", queryset=Domain.objects.all())
    per_idea = serializers.IntegerField(min_value=1, max_value=100, help_text="Reviewers per idea.")
    reviewers = fields.SlugRelatedField(
        slug_field="username",
        queryset=User.objects.all(),
        many=True,
        required=False,
        help_text="Usernames to choose from (default: every reviewer of the domain).",
    )


class AssignmentBulkBalancedOutputSerializer(serializers.Serializer):
    created = serializers.IntegerField()


class ReviewerLoadOutputSerializer(serializers.Serializer):
    reviewer = serializers.IntegerField(source="reviewer.pk")
    reviewer_username = serializers.CharField(source="reviewer.username")
    domain = serializers.CharField(source="domain.key")
    qualified = serializers.BooleanField()
    assigned = serializers.IntegerField()
    pending = serializers.IntegerField()
    completed = serializers.IntegerField()
    declined = serializers.IntegerField()
    progress_percent = serializers.IntegerField()
