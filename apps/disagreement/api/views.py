"""Metrics API: read the latest snapshot (the contract's JSON plus freshness), start a recompute."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsManagerOrAdmin
from apps.accounts.requests import AuthenticatedRequest
from apps.core.errors import ApplicationError
from apps.disagreement import presenters as P
from apps.disagreement import selectors
from apps.disagreement.models import Level, MetricSlice, MetricSnapshot, scope_key
from apps.disagreement.services import metrics_request_recompute


class _ManagerApi(APIView):
    permission_classes = [IsManagerOrAdmin]


def _snapshot_status(snapshot: MetricSnapshot) -> dict[str, Any]:
    return {
        "id": snapshot.id,
        "scope": snapshot.scope,
        "level": snapshot.level,
        "since": snapshot.since,
        "until": snapshot.until,
        "status": snapshot.status,
        "progress": snapshot.progress,
        "created_at": snapshot.created_at,
        "started_at": snapshot.started_at,
        "computed_at": snapshot.computed_at,
        "duration_ms": snapshot.duration_ms,
        "n_ratings": snapshot.n_ratings,
        "latest_rating_at": snapshot.latest_rating_at,
        "error": snapshot.error or None,
    }


class MetricsApi(_ManagerApi):
    class FilterSerializer(serializers.Serializer):
        domain = serializers.CharField(required=False, allow_blank=True)
        dimension = serializers.CharField(required=False, allow_blank=True)
        # A free label (any group found among the reviewers), "__all__" or empty for everyone.
        background = serializers.CharField(required=False, allow_blank=True, max_length=100)
        level = serializers.ChoiceField(choices=Level.values, required=False, default=Level.ORDINAL)
        since = serializers.DateField(required=False)
        until = serializers.DateField(required=False)
        include_categories = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Count category levels (PBIG's 'not B2B' 0) as the lowest grade.",
        )

    @extend_schema(
        parameters=[
            OpenApiParameter(n, str, required=False)
            for n in ("domain", "dimension", "background", "level", "since", "until")
        ]
        + [OpenApiParameter("include_categories", bool, required=False)],
        responses={200: dict, 404: dict},
        summary="Latest disagreement metrics (docs/metrics.md) with their freshness",
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        q = f.validated_data
        scope = scope_key(
            level=q["level"],
            since=q.get("since"),
            until=q.get("until"),
            include_categories=q["include_categories"],
        )
        snapshot = selectors.snapshot_latest(scope=scope)
        if snapshot is None:
            pending = selectors.snapshot_in_progress(scope=scope)
            return Response(
                {
                    "detail": "No metrics have been computed for this scope yet; "
                    "POST /api/metrics/recompute/.",
                    "pending": _snapshot_status(pending) if pending else None,
                },
                status=status.HTTP_404_NOT_FOUND,
            )
        domain, dimension = q.get("domain") or None, q.get("dimension") or None
        background = q.get("background") or None
        strictness = selectors.snapshot_slices(
            snapshot, kind=MetricSlice.Kind.STRICTNESS, domain=domain, dimension=dimension
        )
        pairwise = selectors.snapshot_slices(
            snapshot, kind=MetricSlice.Kind.PAIRWISE, domain=domain, dimension=dimension
        )
        fresh = selectors.snapshot_freshness(snapshot)
        return Response(
            {
                "snapshot": {
                    **_snapshot_status(snapshot),
                    "new_ratings_since": fresh.new_ratings,
                    "stale": fresh.new_ratings > 0,
                },
                "metrics": P.metrics_payload(
                    snapshot.result or {},
                    strictness,
                    pairwise,
                    domain=domain,
                    dimension=dimension,
                    background=background,
                ),
            }
        )


class MetricsRecomputeApi(_ManagerApi):
    class InputSerializer(serializers.Serializer):
        level = serializers.ChoiceField(choices=Level.values, required=False, default=Level.ORDINAL)
        since = serializers.DateField(required=False, allow_null=True)
        until = serializers.DateField(required=False, allow_null=True)
        include_categories = serializers.BooleanField(required=False, default=False)

        class Meta:
            # Nested "InputSerializer"s elsewhere would otherwise share the component name.
            ref_name = "MetricsRecompute"

    @extend_schema(
        request=InputSerializer,
        responses={202: dict, 400: dict, 503: dict},
        summary="Queue a recompute of the metrics (returns the snapshot id)",
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        try:
            snapshot = metrics_request_recompute(actor=request.user, **s.validated_data)
        except ApplicationError as exc:
            code = (
                status.HTTP_400_BAD_REQUEST if exc.errors else status.HTTP_503_SERVICE_UNAVAILABLE
            )
            return Response(exc.as_dict(), status=code)
        return Response(
            {
                "id": snapshot.id,
                "status": snapshot.status,
                "status_url": request.build_absolute_uri(f"/api/metrics/recompute/{snapshot.id}/"),
            },
            status=status.HTTP_202_ACCEPTED,
        )


class MetricsRecomputeStatusApi(_ManagerApi):
    @extend_schema(responses={200: dict, 404: dict}, summary="Status of one recompute")
    def get(self, request: AuthenticatedRequest, snapshot_id: int) -> Response:
        snapshot = MetricSnapshot.objects.defer("result").filter(id=snapshot_id).first()
        if snapshot is None:
            return Response(
                {"detail": f"No recompute with id {snapshot_id}."}, status=status.HTTP_404_NOT_FOUND
            )
        return Response(_snapshot_status(snapshot))
