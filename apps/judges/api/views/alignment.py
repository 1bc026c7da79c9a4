"""Judge alignment: the newest snapshot's report, and a reviewer's own judge (/me/alignment/)."""

from __future__ import annotations

from drf_spectacular.utils import (
    extend_schema,
)
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsManagerOrAdmin, IsReviewer
from apps.accounts.requests import AuthenticatedRequest
from apps.judges import presenters


class AlignmentQuerySerializer(serializers.Serializer):
    domain = serializers.SlugField(required=False, max_length=64)
    # The stubs type every Field's own `source` attribute; DRF takes a field of that name.
    source = serializers.RegexField(  # type: ignore[assignment]
        r"^(auto|run-\d{1,10})$", required=False, default="auto"
    )


class SnapshotMetaSerializer(serializers.Serializer):
    scope = serializers.CharField()
    computed_at = serializers.DateTimeField(allow_null=True)
    stale = serializers.BooleanField(help_text="Runs of the scope finished after it was computed.")
    pending = serializers.BooleanField(help_text="A new computation is queued or running.")
    failure = serializers.CharField(allow_blank=True)


class AlignmentReportSerializer(serializers.Serializer):
    """The stored alignment snapshot of one source; rows are plain JSON objects."""

    snapshot = SnapshotMetaSerializer()
    run_ids = serializers.ListField(child=serializers.IntegerField())
    n_finals = serializers.IntegerField()
    n_predictions = serializers.IntegerField()
    curve = serializers.ListField(
        child=serializers.DictField(),
        help_text="Per configuration, k and dimension: pooled alpha (alpha), per-reviewer "
        "alpha (within_alpha), the level-only baseline's alpha (baseline_alpha), the lift over "
        "it with its interval (lift, lift_low, lift_high), adds_nothing and lift_text (in "
        "words), n and coverage.",
    )
    coarse = serializers.ListField(
        child=serializers.DictField(),
        help_text="Above-median Jaccard and top-50% overlap per configuration and dimension; "
        "null with undefined_reason when predictions or scores are (nearly) constant.",
    )
    discard = serializers.ListField(child=serializers.DictField())
    coverage_accuracy = serializers.ListField(child=serializers.DictField())
    verdicts = serializers.ListField(child=serializers.DictField())
    models = serializers.DictField(child=serializers.ListField(child=serializers.DictField()))
    case_ideas = serializers.ListField(child=serializers.DictField())
    reasoning = serializers.ListField(child=serializers.DictField())
    reasoning_note = serializers.CharField(allow_blank=True)


class MyAlignmentSerializer(serializers.Serializer):
    reviewer = serializers.CharField()
    curve = serializers.ListField(child=serializers.DictField())
    coarse = serializers.ListField(child=serializers.DictField())
    verdicts = serializers.ListField(child=serializers.DictField())
    history = serializers.ListField(
        child=serializers.DictField(),
        help_text="Per domain and dimension: ratings given (n), needed (min_history), missing.",
    )


class JudgeAlignmentApi(APIView):
    permission_classes = [IsManagerOrAdmin]

    @extend_schema(parameters=[AlignmentQuerySerializer], responses=AlignmentReportSerializer)
    def get(self, request: AuthenticatedRequest) -> Response:
        query = AlignmentQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(
            presenters.alignment_api(
                domain_key=query.validated_data.get("domain"),
                source=query.validated_data["source"],
            )
        )


class MyJudgeAlignmentApi(APIView):
    """A reviewer's own judge: alignment per dimension and k, verdicts, ratings still needed."""

    permission_classes = [IsAuthenticated, IsReviewer]

    @extend_schema(responses=MyAlignmentSerializer)
    def get(self, request: AuthenticatedRequest) -> Response:
        return Response(presenters.my_alignment_api(user=request.user))
