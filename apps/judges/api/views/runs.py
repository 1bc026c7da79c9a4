"""Judge runs and studies: listing, one run with its alignment rows, cancel, starting a study."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsAdmin, IsManagerOrAdmin
from apps.accounts.requests import AuthenticatedRequest
from apps.catalog.models import Domain
from apps.core import untrusted
from apps.core.api import ErrorSerializer
from apps.core.errors import ApplicationError, FieldError
from apps.core.pagination import BIGINT_MAX
from apps.judges import presenters, selectors, services
from apps.judges.api.views.common import _error, _query
from apps.judges.models import JudgeConfig, JudgeRun


class RunSerializer(serializers.ModelSerializer):
    # Studies cover every reviewer of a domain: they have none, and the schema says so.
    reviewer = serializers.CharField(
        source="reviewer.username",
        default=None,
        allow_null=True,
        read_only=True,
        help_text="The reviewer whose judge this run evaluates; null for studies.",
    )
    domain = serializers.CharField(source="domain.key")
    configs = serializers.SerializerMethodField()
    percent = serializers.IntegerField(read_only=True)

    class Meta:
        model = JudgeRun
        fields = [
            "id",
            "purpose",
            "status",
            "reviewer",
            "domain",
            "dimensions",
            "configs",
            "shots",
            "seeds",
            "backend",
            "total",
            "done",
            "failed",
            "percent",
            "calls",
            "tokens_in",
            "tokens_out",
            "tokens_cached",
            "estimated_cost",
            "created_at",
            "started_at",
            "finished_at",
            "error",
            "rerun_requested",
        ]

    def get_configs(self, run: JudgeRun) -> list[dict[str, Any]]:
        return [
            {
                "id": c.id,
                "name": c.name,
                "kind": c.kind,
                "backend": c.backend,
                "backend_label": c.backend_label,
            }
            for c in run.configs.all()
        ]


class RunFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=JudgeRun.Status.choices, required=False)
    purpose = serializers.ChoiceField(choices=JudgeRun.Purpose.choices, required=False)


class JudgeRunListApi(APIView):
    permission_classes = [IsManagerOrAdmin]

    @extend_schema(
        parameters=[
            _query("status", "Only runs in this status", enum=JudgeRun.Status.values),
            _query("purpose", "Only runs of this purpose", enum=JudgeRun.Purpose.values),
        ],
        responses=RunSerializer(many=True),
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        filters = RunFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        qs = JudgeRun.objects.filter(**filters.validated_data)
        qs = qs.select_related("reviewer", "domain").prefetch_related("configs")
        return Response(RunSerializer(qs.order_by("-created_at", "-id")[:200], many=True).data)


class RunAlignmentRowSerializer(serializers.Serializer):
    config = serializers.CharField()
    k = serializers.IntegerField()
    dimension = serializers.CharField()
    alpha = serializers.FloatField(allow_null=True, help_text="Pooled alpha (paper 001).")
    per_reviewer_alpha = serializers.FloatField(
        allow_null=True, required=False, help_text="Mean of each reviewer's own alpha."
    )
    level_only_alpha = serializers.FloatField(
        allow_null=True, required=False, help_text="Pooled alpha of the level-only baseline."
    )
    lift = serializers.FloatField(allow_null=True, required=False)
    lift_low = serializers.FloatField(allow_null=True, required=False)
    lift_high = serializers.FloatField(allow_null=True, required=False)
    adds_nothing = serializers.BooleanField(allow_null=True, required=False)
    n = serializers.IntegerField()
    coverage = serializers.FloatField(allow_null=True)
    discard_rate = serializers.FloatField(allow_null=True)


class RunDetailSerializer(RunSerializer):
    alignment = serializers.SerializerMethodField()

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "alignment"]

    @extend_schema_field(RunAlignmentRowSerializer(many=True, allow_null=True))
    def get_alignment(self, run: JudgeRun) -> list[dict[str, Any]] | None:
        """The stored alignment of a finished run; null while none is stored."""
        if run.status != JudgeRun.Status.DONE:
            return None
        snapshot, rows = selectors.run_alignment_rows(run)
        return presenters.alignment_table(rows) if snapshot else None


class JudgeRunDetailApi(APIView):
    permission_classes = [IsManagerOrAdmin]

    @extend_schema(responses=RunDetailSerializer)
    def get(self, request: AuthenticatedRequest, run_id: int) -> Response:
        try:
            run = services.judge_run_get(run_id=run_id)
        except ApplicationError as exc:
            return _error(exc)
        return Response(RunDetailSerializer(run).data)


class JudgeRunCancelApi(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        request=None,
        responses={
            200: RunSerializer,
            400: OpenApiResponse(
                ErrorSerializer,
                description="The run is already done, failed or cancelled: only queued or "
                "running runs can be cancelled.",
            ),
        },
    )
    def post(self, request: AuthenticatedRequest, run_id: int) -> Response:
        try:
            run = services.judge_run_cancel(
                run=services.judge_run_get(run_id=run_id), by=request.user
            )
        except ApplicationError as exc:
            return _error(exc)
        return Response(RunSerializer(run).data)


class StudyInputSerializer(serializers.Serializer):
    domain = serializers.SlugField(help_text="Domain key")
    dimensions = serializers.ListField(
        child=serializers.SlugField(max_length=64), min_length=1, max_length=200
    )
    configs = serializers.ListField(
        child=serializers.CharField(max_length=100),
        min_length=1,
        max_length=100,
        help_text="Configuration ids or names, or kinds (zero_shot, aggregate, personalized)",
    )
    shots = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=50),
        min_length=1,
        default=[0, 1, 2, 5, 9],
    )
    seeds = serializers.IntegerField(min_value=1, max_value=10, default=3)
    backend = serializers.ChoiceField(
        choices=[("", "each configuration's own")] + list(JudgeConfig.Backend.choices),
        required=False,
        default="",
    )
    min_history = serializers.IntegerField(min_value=1, max_value=1000, default=2)


def resolve_configs(values: list[str]) -> list[JudgeConfig]:
    """Ids, names or kinds (a kind means every active configuration of that kind)."""
    found: list[JudgeConfig] = []
    errors = []
    for value in values:
        value = str(value).strip()
        number = untrusted.parse_int(value, low=1, high=BIGINT_MAX)
        if number is not None:
            match = list(JudgeConfig.objects.filter(id=number))
        elif value in JudgeConfig.Kind.values:
            match = list(JudgeConfig.objects.filter(kind=value, is_active=True))
        else:
            match = list(JudgeConfig.objects.filter(name=value))
        if not match:
            errors.append(value)
        found += [c for c in match if c not in found]
    if errors:
        raise ApplicationError(
            "Unknown judge configuration.",
            errors=[FieldError("configs", "no such configuration", value=v) for v in errors],
        )
    return found


class JudgeStudyStartApi(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(request=StudyInputSerializer, responses={201: RunSerializer, 200: RunSerializer})
    def post(self, request: AuthenticatedRequest) -> Response:
        data = StudyInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:
            domain = Domain.objects.filter(key=v["domain"]).first()
            if domain is None:
                raise ApplicationError(
                    "Unknown domain.",
                    errors=[FieldError("domain", "no such domain", value=v["domain"])],
                )
            services.judge_configs_ensure_defaults()
            run, created = services.judge_study_start(
                by=request.user,
                domain=domain,
                dimensions=v["dimensions"],
                configs=resolve_configs(v["configs"]),
                shots=v["shots"],
                seeds=v["seeds"],
                backend=v["backend"],
                min_history=v["min_history"],
            )
        except ApplicationError as exc:
            return _error(exc)
        return Response(
            RunSerializer(run).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )
