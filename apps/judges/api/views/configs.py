"""Judge configurations: admins write, managers read."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
)
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import has_role
from apps.accounts.requests import AuthenticatedRequest
from apps.core.api import ErrorSerializer
from apps.core.errors import ApplicationError, NotFound
from apps.judges import services
from apps.judges.api.views.common import _error
from apps.judges.models import JudgeConfig


class ConfigsReadManagersWriteAdmins(BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return has_role(request.user, ("manager", "admin"))
        return has_role(request.user, ("admin",))


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
            "panel_evidence",
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
    panel_evidence = serializers.BooleanField(
        required=False,
        help_text="LLM configurations: add the other reviewers' scores on the idea, mapped onto "
        "this reviewer's scale, to the prompt (never the reviewer's own). Default false.",
    )

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
