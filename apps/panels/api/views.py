"""Panels API (read-only): a run's status, cost and study figures; an idea's panel scores.

Managers and admins read; runs are started from the panels page or the panel_study command."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsManagerOrAdmin
from apps.accounts.requests import AuthenticatedRequest
from apps.catalog.models import Domain
from apps.core.errors import NotFound
from apps.panels.models import PanelRun


class PanelRunDetailApi(APIView):
    permission_classes = [IsManagerOrAdmin]

    class OutputSerializer(serializers.ModelSerializer):
        domain: serializers.SlugRelatedField[Domain] = serializers.SlugRelatedField(
            slug_field="key", read_only=True
        )
        members = serializers.SerializerMethodField()
        estimate = serializers.DictField(read_only=True)
        figures = serializers.DictField(
            read_only=True,
            help_text="Per dimension alpha_single, alpha_before, alpha_after, "
            "switch_to_majority_rate, ... (docs/panels.md).",
        )

        class Meta:
            model = PanelRun
            fields = [
                "id",
                "domain",
                "persona_source",
                "members",
                "dimension_keys",
                "max_rounds",
                "model",
                "status",
                "error",
                "budget_tokens",
                "estimate",
                "calls",
                "prompt_tokens",
                "completion_tokens",
                "figures",
                "created_at",
                "finished_at",
            ]

        def get_members(self, run: PanelRun) -> list[str]:
            return [p.name for p in run.personas.order_by("id")]

    @extend_schema(
        operation_id="panels_run_retrieve",
        responses={200: OutputSerializer},
        summary="A panel run: status, cost, and its study figures against the reviewers.",
    )
    def get(self, request: AuthenticatedRequest, run_id: int) -> Response:
        run = PanelRun.objects.select_related("domain").filter(id=run_id).first()
        if run is None:
            raise NotFound(f"No panel run {run_id}.")
        return Response(self.OutputSerializer(run).data)
