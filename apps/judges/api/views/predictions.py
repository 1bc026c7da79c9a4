"""Judge predictions: the finals of the newest prediction runs, filtered and paginated."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.models import User
from apps.accounts.permissions import IsManagerOrAdmin
from apps.accounts.requests import AuthenticatedRequest
from apps.catalog.models import Domain
from apps.core.api import PAGINATION_PARAMETERS, paginated_schema
from apps.core.pagination import Pagination
from apps.judges import presenters, selectors
from apps.judges.models import JudgeConfig


class PredictionSerializer(serializers.Serializer):
    """One final prediction (majority over seeds) for an idea the reviewer has not rated."""

    reviewer = serializers.CharField()
    idea = serializers.CharField(help_text="The idea's external id")
    idea_id = serializers.IntegerField()
    dimension = serializers.CharField()
    kind = serializers.ChoiceField(choices=JudgeConfig.Kind.choices)
    k = serializers.IntegerField()
    score = serializers.IntegerField(allow_null=True)
    confidence = serializers.IntegerField(allow_null=True)
    signal = serializers.CharField(
        allow_blank=True, help_text="panel, text or level (empty for LLM configurations)."
    )
    other_reviewers = serializers.IntegerField(
        help_text="Other reviewers whose scores a panel prediction rests on."
    )
    level_only_score = serializers.IntegerField(
        allow_null=True, help_text="The level-only baseline: the mean of the examples' scores."
    )
    shortlisted = serializers.BooleanField(
        help_text="On the reviewer's stored shortlist for this dimension."
    )
    kept = serializers.IntegerField()
    discarded = serializers.IntegerField()
    failed = serializers.IntegerField()
    reason = serializers.CharField(allow_blank=True)
    model = serializers.CharField(
        allow_blank=True,
        help_text="What produced it: 'model (response mode)', or the local baseline's label.",
    )
    run = serializers.IntegerField()


class PredictionFilterSerializer(serializers.Serializer):
    """Query parameters; DRF's CharField refuses NUL bytes, so nothing odd reaches the database."""

    reviewer = serializers.CharField(required=False, max_length=150, help_text="Reviewer username")
    domain = serializers.SlugField(required=False, max_length=64, help_text="Domain key")
    dimension = serializers.SlugField(required=False, max_length=64, help_text="Dimension key")

    def validate_reviewer(self, value: str) -> User:
        user = User.objects.filter(username=value).first()
        if user is None:
            raise serializers.ValidationError("no such reviewer")
        return user

    def validate_domain(self, value: str) -> Domain:
        domain = Domain.objects.filter(key=value).first()
        if domain is None:
            raise serializers.ValidationError("no such domain")
        return domain


# The fields of JudgeFinal and its relations that prediction_api_rows reads.
ROW_FIELDS = (
    "run_id",
    "kind",
    "k",
    "score",
    "confidence",
    "signal",
    "panel_size",
    "level_score",
    "kept",
    "discarded",
    "failed",
    "reason",
    "reviewer__username",
    "idea__external_id",
    "dimension__key",
)


class JudgePredictionListApi(APIView):
    """Paginated like every list (limit/offset, a total in `count`): the database counts and
    slices, and only the page's rows are loaded and labelled (issue 29: the whole list was
    built, about 4 s for 15,000 rows, then cut silently at 5,000)."""

    permission_classes = [IsManagerOrAdmin]

    @extend_schema(
        parameters=[PredictionFilterSerializer, *PAGINATION_PARAMETERS],
        responses=paginated_schema("PaginatedPredictionList", PredictionSerializer),
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        filters = PredictionFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        v = filters.validated_data
        reviewer = v.get("reviewer")
        finals = (
            selectors.unrated_predictions(
                reviewer_id=reviewer.id if reviewer else None,
                domain=v.get("domain"),
                dimension=v.get("dimension"),
            )
            # Only what a row shows: three related rows, not five, and their one field each.
            .select_related(None)
            .select_related("reviewer", "idea", "dimension")
            .only(*ROW_FIELDS)
        )
        paginator = Pagination()
        page = paginator.paginate_queryset(finals, request, view=self) or []
        rows = presenters.prediction_api_rows(presenters.prediction_rows_of(list(page)))
        return paginator.get_paginated_response(rows)
