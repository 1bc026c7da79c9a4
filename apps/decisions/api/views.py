"""Decide over the API: the latest ranking of one domain, as the page and the CSV show it."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsManagerOrAdmin
from apps.accounts.requests import AuthenticatedRequest
from apps.core.errors import ApplicationError, FieldError, NotFound
from apps.core.gc_freeze import without_cycle_collection
from apps.decisions import presenters as P
from apps.decisions import selectors
from apps.decisions.flags import extra_flags
from apps.decisions.ranking.model import ALL


class DecisionRankingApi(APIView):
    permission_classes = [IsManagerOrAdmin]

    class FilterSerializer(serializers.Serializer):
        domain = serializers.CharField(required=False, allow_blank=True, max_length=64)
        dimension = serializers.CharField(required=False, default=ALL, max_length=64)
        sort = serializers.ChoiceField(
            choices=list(P.SORTS), required=False, default=P.DEFAULT_SORT
        )
        q = serializers.CharField(required=False, allow_blank=True, max_length=200)
        # "people": the board fitted on people's reads only (no predictions, no text model).
        evidence = serializers.ChoiceField(
            choices=[k for k, _ in P.EVIDENCE], required=False, default=P.DEFAULT_EVIDENCE
        )

    @extend_schema(
        parameters=[
            OpenApiParameter(n, str, required=False)
            for n in ("domain", "dimension", "sort", "q", "evidence")
        ],
        responses={200: dict, 404: dict},
        summary="The latest Decide ranking of one domain (docs/decide.md)",
    )
    @without_cycle_collection
    def get(self, request: AuthenticatedRequest) -> Response:
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        q = f.validated_data
        snapshot = selectors.snapshot_latest()
        if snapshot is None:
            raise NotFound("The ranking has not been computed yet.")
        domains = selectors.snapshot_domains(snapshot)
        domain = q.get("domain") or (domains[0] if domains else "")
        if domain not in domains:
            raise ApplicationError(
                "No such ranking.",
                errors=[FieldError(field="domain", message="is not a ranked domain", value=domain)],
            )
        dims = [ALL, *(snapshot.result or {}).get("dimensions", [])]
        if q["dimension"] not in dims:
            raise serializers.ValidationError({"dimension": [f"must be one of {', '.join(dims)}"]})
        rows = P.sort_rows(
            selectors.snapshot_rows(
                snapshot, domain=domain, dimension=q["dimension"], evidence=q["evidence"]
            ),
            sort=q["sort"],
            query=q.get("q", ""),
        )
        rows = P.with_flags(
            rows,
            extra_flags([r["idea_id"] for r in rows], domain=domain, dimension=q["dimension"]),
        )
        header, values = P.csv_rows(rows, sort=q["sort"], evidence=q["evidence"])
        return Response(
            {
                "snapshot": {
                    "id": snapshot.id,
                    "computed_at": snapshot.computed_at,
                    "n_ratings": snapshot.n_ratings,
                    "n_predictions": snapshot.n_predictions,
                    "top_share": (snapshot.result or {}).get("top_share"),
                },
                "domain": domain,
                "dimension": q["dimension"],
                "evidence": q["evidence"],
                "ordered_by": P.SORTS[q["sort"]],
                "rows": [dict(zip(header, v, strict=True)) for v in values],
            }
        )
