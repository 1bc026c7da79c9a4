"""Judges API: configurations (admins write, managers read), runs, studies, predictions, alignment.

Reviewers reach only /api/judges/me/alignment/ (their own judge).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.models import User
from apps.accounts.permissions import IsAdmin, IsManagerOrAdmin, IsReviewer, has_role
from apps.catalog.models import Domain
from apps.core.api import ErrorSerializer
from apps.core.errors import ApplicationError, FieldError, NotFound
from apps.core.requests import AuthenticatedRequest
from apps.judges import presenters, selectors, services
from apps.judges.models import JudgeConfig, JudgeRun


class ConfigsReadManagersWriteAdmins(BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return has_role(request.user, ("manager", "admin"))
        return has_role(request.user, ("admin",))


def _error(exc: ApplicationError) -> Response:
    code = status.HTTP_404_NOT_FOUND if isinstance(exc, NotFound) else status.HTTP_400_BAD_REQUEST
    return Response(exc.as_dict(), status=code)


class ConfigSerializer(serializers.ModelSerializer):
    backend_label = serializers.CharField(read_only=True)

    class Meta:
        model = JudgeConfig
        fields = [
            "id",
            "name",
            "kind",
            "backend",
            "backend_label",
            "model",
            "base_url",
            "shots",
            "seeds",
            "temperature",
            "confidence_threshold",
            "min_history",
            "concurrency",
            "is_active",
            "auto",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "backend_label", "created_at", "updated_at"]


class ConfigInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    kind = serializers.ChoiceField(choices=JudgeConfig.Kind.choices)
    backend = serializers.ChoiceField(choices=JudgeConfig.Backend.choices, required=False)
    model = serializers.CharField(max_length=200, required=False, allow_blank=True)
    base_url = serializers.URLField(required=False, allow_blank=True)
    shots = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=50), required=False
    )
    seeds = serializers.IntegerField(min_value=1, max_value=10, required=False)
    temperature = serializers.FloatField(min_value=0, max_value=2, required=False)
    confidence_threshold = serializers.IntegerField(min_value=0, max_value=100, required=False)
    min_history = serializers.IntegerField(min_value=1, required=False)
    concurrency = serializers.IntegerField(min_value=1, max_value=64, required=False)
    is_active = serializers.BooleanField(required=False)
    auto = serializers.BooleanField(required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # The one configuration validator (services.configs): bounds, kinds, the SSRF allowlist.
        checked, errors = services.judge_config_errors(attrs)
        if errors:
            raise serializers.ValidationError({e.field: [str(e)] for e in errors})
        return checked


class JudgeConfigListApi(APIView):
    permission_classes = [ConfigsReadManagersWriteAdmins]

    @extend_schema(responses=ConfigSerializer(many=True))
    def get(self, request: AuthenticatedRequest) -> Response:
        return Response(
            ConfigSerializer(JudgeConfig.objects.order_by("kind", "name"), many=True).data
        )

    @extend_schema(request=ConfigInputSerializer, responses={201: ConfigSerializer})
    def post(self, request: AuthenticatedRequest) -> Response:
        data = ConfigInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        values.setdefault("backend", services.default_backend())
        try:
            config = services.judge_config_create(by=request.user, **values)
        except ApplicationError as exc:
            return _error(exc)
        return Response(ConfigSerializer(config).data, status=status.HTTP_201_CREATED)


class JudgeConfigDetailApi(APIView):
    permission_classes = [ConfigsReadManagersWriteAdmins]

    def _get(self, config_id: int) -> JudgeConfig:
        config = JudgeConfig.objects.filter(id=config_id).first()
        if config is None:
            raise NotFound(f"Judge configuration {config_id} does not exist.")
        return config

    @extend_schema(responses=ConfigSerializer)
    def get(self, request: AuthenticatedRequest, config_id: int) -> Response:
        try:
            return Response(ConfigSerializer(self._get(config_id)).data)
        except ApplicationError as exc:
            return _error(exc)

    @extend_schema(request=ConfigInputSerializer, responses=ConfigSerializer)
    def patch(self, request: AuthenticatedRequest, config_id: int) -> Response:
        data = ConfigInputSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        try:
            config = services.judge_config_update(
                config=self._get(config_id), by=request.user, **data.validated_data
            )
        except ApplicationError as exc:
            return _error(exc)
        return Response(ConfigSerializer(config).data)

    put = patch

    @extend_schema(
        responses={
            204: None,
            400: OpenApiResponse(
                ErrorSerializer,
                description="The configuration was used by judge runs: deleting it would "
                "orphan their predictions; deactivate it instead (is_active=false).",
            ),
        }
    )
    def delete(self, request: AuthenticatedRequest, config_id: int) -> Response:
        try:
            services.judge_config_delete(config=self._get(config_id), by=request.user)
        except ApplicationError as exc:
            return _error(exc)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _query(name: str, description: str, **kwargs: Any) -> OpenApiParameter:
    return OpenApiParameter(
        name,
        OpenApiTypes.STR,
        OpenApiParameter.QUERY,
        required=False,
        description=description,
        **kwargs,
    )


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
    dimensions = serializers.ListField(child=serializers.SlugField(), min_length=1)
    configs = serializers.ListField(
        child=serializers.CharField(),
        min_length=1,
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
    min_history = serializers.IntegerField(min_value=1, default=2)


def resolve_configs(values: list[str]) -> list[JudgeConfig]:
    """Ids, names or kinds (a kind means every active configuration of that kind)."""
    found: list[JudgeConfig] = []
    errors = []
    for value in values:
        value = str(value).strip()
        if value.isdigit():
            match = list(JudgeConfig.objects.filter(id=int(value)))
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


class JudgePredictionListApi(APIView):
    permission_classes = [IsManagerOrAdmin]

    @extend_schema(
        parameters=[PredictionFilterSerializer], responses=PredictionSerializer(many=True)
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        filters = PredictionFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        v = filters.validated_data
        rows = presenters.prediction_rows(
            reviewer=v.get("reviewer"), domain=v.get("domain"), dimension=v.get("dimension")
        )
        return Response(presenters.prediction_api_rows(rows[:5000]))


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
