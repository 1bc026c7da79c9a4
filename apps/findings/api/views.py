"""Findings API: a domain's estimates and findings, one idea's findings (blind for reviewers),
and a recompute. Reads the stored snapshot; nothing heavy runs in a request."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsManagerOrAdmin
from apps.accounts.requests import AuthenticatedRequest
from apps.catalog.models import Domain, Idea
from apps.core.errors import ApplicationError, FieldError, NotFound
from apps.findings import presenters as P
from apps.findings import selectors
from apps.findings.models import FindingSnapshot, Source
from apps.findings.services import findings_request_recompute
from apps.screening.models import Assignment


def _snapshot_status(snapshot: FindingSnapshot | None) -> dict[str, Any] | None:
    if snapshot is None:
        return None
    return {
        "id": snapshot.id,
        "threshold": snapshot.threshold,
        "status": snapshot.status,
        "computed_at": snapshot.computed_at,
        "duration_ms": snapshot.duration_ms,
        "n_rationales": snapshot.n_rationales,
    }


def _latest() -> FindingSnapshot:
    snapshot = selectors.snapshot_latest()
    if snapshot is None:
        raise NotFound("No findings have been computed yet.")
    return snapshot


class FindingsApi(APIView):
    permission_classes = [IsManagerOrAdmin]

    class FilterSerializer(serializers.Serializer):
        domain = serializers.SlugField(max_length=64)

    @extend_schema(
        parameters=[
            OpenApiParameter("domain", str, required=True),
            OpenApiParameter("source", str, enum=Source.values),
        ],
        responses={200: dict, 400: dict, 404: dict},
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        """Per scope (domain, each dimension, each idea): n_rationales, n_units, n_findings,
        curve, chao2, coverage, expected_new; plus the domain's findings, the saturation curve
        and the threshold sweep (docs/api.md)."""
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        domain = f.validated_data["domain"]
        # Read apart: a serializer field named "source" would shadow DRF's Field.source.
        source = request.query_params.get("source", Source.REVIEWERS)
        if source not in Source.values:
            raise ApplicationError(
                "Unknown source.",
                errors=[
                    FieldError(
                        field="source",
                        message=f"must be one of {', '.join(Source.values)}",
                        value=source[:40],
                    )
                ],
            )
        if not Domain.objects.filter(key=domain).exists():
            raise ApplicationError(
                "Unknown domain.",
                errors=[FieldError(field="domain", message="no such domain", value=domain)],
            )
        snapshot = _latest()
        summary = selectors.domain_summary(snapshot, domain=domain, source=source)
        ideas = selectors.idea_sections(snapshot, domain=domain, source=source)
        scopes = P.scope_rows({**summary, "ideas": ideas} if summary else None, domain=domain)
        return Response(
            {
                "snapshot": _snapshot_status(snapshot),
                "domain": domain,
                "source": source,
                "scopes": scopes,
                "findings": (summary or {}).get("findings", []),
                "saturation": (summary or {}).get("saturation"),
                "sweep": (summary or {}).get("sweep"),
                "unsaturated_idea_ids": sorted(selectors.unsaturated_idea_ids(domain=domain))
                if source == Source.REVIEWERS
                else [],
            }
        )


class IdeaFindingsApi(APIView):
    """One idea's findings. Managers and admins see all, with who raised each and the
    estimates; a reviewer assigned the idea sees only their own findings (blind review);
    anyone else gets 404, as for the idea itself."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: dict, 404: dict})
    def get(self, request: AuthenticatedRequest, idea_id: int) -> Response:
        user = request.user
        idea = Idea.objects.select_related("patent__domain").filter(pk=idea_id).first()
        visible = idea is not None and (
            user.can_read_all_ratings
            or Assignment.objects.filter(reviewer=user, idea_id=idea_id).exists()
        )
        if idea is None or not visible:
            raise NotFound("No such idea.")
        snapshot = _latest()
        section = selectors.blind_section(selectors.idea_section(snapshot, idea=idea), viewer=user)
        if section is None:
            section = {"findings": [], "n_findings": 0}
        return Response({"snapshot": _snapshot_status(snapshot), "idea": idea.pk, **section})


class FindingsRecomputeApi(APIView):
    permission_classes = [IsManagerOrAdmin]

    class InputSerializer(serializers.Serializer):
        threshold = serializers.FloatField(required=False, min_value=0.05, max_value=1.0)

        class Meta:
            ref_name = "FindingsRecompute"

    @extend_schema(request=InputSerializer, responses={202: dict, 400: dict, 503: dict})
    def post(self, request: AuthenticatedRequest) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        snapshot = findings_request_recompute(
            actor=request.user, threshold=s.validated_data.get("threshold")
        )
        return Response(
            {"id": snapshot.id, "status": snapshot.status, "threshold": snapshot.threshold},
            status=status.HTTP_202_ACCEPTED,
        )
