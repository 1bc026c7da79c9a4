"""Decision marks over the API (managers and admins; reviewers get 403).

PUT /api/decisions/marks/{idea_id}/ records a new version of the idea's mark; GET
/api/decisions/marks/?domain=KEY lists the domain's current marks; GET
/api/decisions/marks/{idea_id}/history/ every version, oldest first (docs/api.md).
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsManagerOrAdmin
from apps.accounts.requests import AuthenticatedRequest
from apps.catalog.models import Idea
from apps.core.api import (
    ERROR_RESPONSES,
    PAGINATION_PARAMETERS,
    ErrorSerializer,
    paginated_response,
    paginated_schema,
)
from apps.core.errors import ApplicationError, FieldError, NotFound
from apps.core.pagination import BIGINT_MAX
from apps.decisions.models import DecisionMark
from apps.decisions.record import selectors
from apps.decisions.record.services import NOTE_MAX, decision_mark_record


class MarkOutputSerializer(serializers.Serializer):
    idea = serializers.IntegerField(source="idea_id")
    idea_external_id = serializers.CharField(source="idea.external_id")
    title = serializers.CharField(source="idea.display_title")
    domain = serializers.CharField(source="domain.key")
    version = serializers.IntegerField()
    mark = serializers.CharField()
    note = serializers.CharField()
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True, default=None)
    decided_at = serializers.DateTimeField()
    # The board as the decider saw it: snapshot id and time, rank, estimate, low, high,
    # shortlist_size, p_top_n, in_shortlist, judge_share, n_reviewers.
    snapshot = serializers.JSONField(source="figures")


def _idea(pk: int) -> Idea:
    idea = (
        Idea.objects.select_related("patent__domain").filter(pk=pk).first()
        if pk <= BIGINT_MAX
        else None
    )
    if idea is None:
        raise NotFound(f"No idea with id {pk}.")
    return idea


class DecisionMarkListApi(APIView):
    permission_classes = [IsManagerOrAdmin]

    @extend_schema(
        tags=["decisions"],
        parameters=[OpenApiParameter("domain", str, required=True), *PAGINATION_PARAMETERS],
        responses={
            200: paginated_schema("PaginatedDecisionMarkList", MarkOutputSerializer),
            **ERROR_RESPONSES,
        },
        summary="The current mark of every marked idea of one domain",
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        key = str(request.query_params.get("domain", ""))
        domain = selectors.domain_of(key)
        if domain is None:
            raise ApplicationError(
                "No such domain.",
                errors=[
                    FieldError(
                        field="domain",
                        message="name a domain by its key" if not key else "is not a domain",
                        value=key[:200],
                    )
                ],
            )
        return paginated_response(
            request=request,
            view=self,
            queryset=selectors.marks_current(domain=domain.key),
            serializer_class=MarkOutputSerializer,
        )


class MarkInputSerializer(serializers.Serializer):
    mark = serializers.ChoiceField(choices=DecisionMark.Mark.values)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=NOTE_MAX)


class DecisionMarkDetailApi(APIView):
    permission_classes = [IsManagerOrAdmin]

    @extend_schema(
        tags=["decisions"],
        request=MarkInputSerializer,
        responses={200: MarkOutputSerializer, **ERROR_RESPONSES},
        summary="Record a new version of the idea's mark (take_forward, hold, reject)",
    )
    def put(self, request: AuthenticatedRequest, idea_id: int) -> Response:
        idea = _idea(idea_id)
        data = MarkInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        mark = decision_mark_record(
            actor=request.user,
            idea=idea,
            mark=data.validated_data["mark"],
            note=data.validated_data.get("note", ""),
        )
        return Response(MarkOutputSerializer(mark).data)


class DecisionMarkHistoryApi(APIView):
    permission_classes = [IsManagerOrAdmin]

    @extend_schema(
        tags=["decisions"],
        responses={
            200: MarkOutputSerializer(many=True),
            403: ErrorSerializer,
            404: ErrorSerializer,
        },
        summary="Every version of the idea's mark, oldest first",
    )
    def get(self, request: AuthenticatedRequest, idea_id: int) -> Response:
        idea = _idea(idea_id)
        rows = selectors.mark_history(idea=idea).order_by("version")
        return Response(MarkOutputSerializer(rows, many=True).data)
