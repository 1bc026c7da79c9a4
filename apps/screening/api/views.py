"""Screening API: rubrics, ratings (own for reviewers, all for managers/admins), the reviewer's
rating of an idea, declines and assignments. Writes go through the same services as the form.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsAdmin, IsReviewer
from apps.accounts.requests import AuthenticatedRequest
from apps.catalog.api.access import ideas_visible_to
from apps.catalog.models import Idea
from apps.core.api import (
    ERROR_RESPONSES,
    PAGINATION_PARAMETERS,
    ErrorSerializer,
    ReadOnly,
    paginated_response,
    paginated_schema,
    query_filters,
)
from apps.core.errors import NotFound, PermissionDenied
from apps.screening.api.access import rating_for, ratings_visible_to
from apps.screening.api.serializers import (
    AssignmentBulkBalancedInputSerializer,
    AssignmentBulkBalancedOutputSerializer,
    AssignmentCreateInputSerializer,
    AssignmentCreateOutputSerializer,
    AssignmentFilterSerializer,
    AssignmentOutputSerializer,
    DeclineInputSerializer,
    DomainFilterSerializer,
    MyAssignmentFilterSerializer,
    MyRatingInputSerializer,
    MyRatingOutputSerializer,
    RatingFilterSerializer,
    RatingHistoryOutputSerializer,
    RatingOutputSerializer,
    ReviewerLoadOutputSerializer,
    RubricOutputSerializer,
)
from apps.screening.gates import open_dimensions
from apps.screening.models import Assignment, Rating, Rubric
from apps.screening.selectors import Screening, assignment_for, screening_of
from apps.screening.selectors.assignments import (
    assignment_list,
    assignment_queue_for,
    reviewer_load,
)
from apps.screening.services.assignments import (
    assignment_bulk_balanced,
    assignment_delete,
    assignments_create,
)
from apps.screening.services.ratings import rating_decline, rating_submit

READ_ONLY = [IsAuthenticated, ReadOnly]


def _valid(serializer_class: type, request: AuthenticatedRequest) -> dict[str, Any]:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


# ---- rubrics ---------------------------------------------------------------------------------
def _rubrics() -> Any:
    return Rubric.objects.prefetch_related("dimensions", "domains").order_by("-is_default", "name")


class RubricListApi(APIView):
    permission_classes = READ_ONLY

    @extend_schema(
        tags=["rubrics"],
        parameters=PAGINATION_PARAMETERS,
        operation_id="rubrics_list",
        responses=paginated_schema("PaginatedRubricList", RubricOutputSerializer),
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        return paginated_response(
            request=request, view=self, queryset=_rubrics(), serializer_class=RubricOutputSerializer
        )


class RubricDetailApi(APIView):
    permission_classes = READ_ONLY

    @extend_schema(tags=["rubrics"], responses={200: RubricOutputSerializer, 404: ErrorSerializer})
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        rubric = _rubrics().filter(pk=pk).first()
        if rubric is None:
            raise NotFound(f"No rubric with id {pk}.")
        return Response(RubricOutputSerializer(rubric).data)


# ---- ratings ---------------------------------------------------------------------------------
class RatingListApi(APIView):
    """Reviewers get their own ratings; managers and admins get everyone's. Read-only."""

    permission_classes = READ_ONLY

    @extend_schema(
        tags=["ratings"],
        parameters=[RatingFilterSerializer, *PAGINATION_PARAMETERS],
        operation_id="ratings_list",
        responses={
            200: paginated_schema("PaginatedRatingList", RatingOutputSerializer),
            400: ErrorSerializer,
        },
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        qs = ratings_visible_to(request.user)
        filters = query_filters(RatingFilterSerializer, request)
        if "reviewer" in filters:
            value = filters["reviewer"]
            qs = (
                qs.filter(reviewer_id=int(value))
                if value.isascii() and value.isdigit()
                else qs.filter(reviewer__username=value)
            )
        if "idea" in filters:
            qs = qs.filter(idea_id=filters["idea"])
        if "domain" in filters:
            qs = qs.filter(idea__patent__domain__key=filters["domain"])
        if "dimension" in filters:
            qs = qs.filter(dimension__key=filters["dimension"])
        if "status" in filters:
            qs = qs.filter(status=filters["status"])
        qs = qs.order_by("idea__external_id", "reviewer__username", "dimension__position")
        return paginated_response(
            request=request, view=self, queryset=qs, serializer_class=RatingOutputSerializer
        )


class RatingDetailApi(APIView):
    permission_classes = READ_ONLY

    @extend_schema(tags=["ratings"], responses={200: RatingOutputSerializer, 404: ErrorSerializer})
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        return Response(RatingOutputSerializer(rating_for(request.user, pk)).data)


class RatingHistoryApi(APIView):
    permission_classes = READ_ONLY

    @extend_schema(
        tags=["ratings"],
        responses={200: RatingHistoryOutputSerializer(many=True), 404: ErrorSerializer},
    )
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        rating = rating_for(request.user, pk)
        rows = rating.history.select_related("changed_by").order_by("changed_at", "id")
        return Response(RatingHistoryOutputSerializer(rows, many=True).data)


def _idea_for_reviewer(request: AuthenticatedRequest, pk: int) -> Idea:
    """The idea if this reviewer may see it at all (else 404); assignment is checked later (403)."""
    idea = ideas_visible_to(request.user).filter(pk=pk).first()
    if idea is None:
        raise NotFound(f"No idea with id {pk} is visible to you.")
    return idea


def _my_rating(screening: Screening, idea: Idea) -> dict[str, Any]:
    ratings = screening.ratings
    scores = {r.dimension.key: r.score for r in ratings}
    return {
        "idea": idea.pk,
        "idea_external_id": idea.external_id,
        "rubric": screening.rubric.key,
        "assignment_status": screening.assignment.status,
        "decline_reason": screening.assignment.decline_reason,
        "open_dimensions": open_dimensions([d.rule() for d in screening.dimensions], scores),
        "scores": scores,
        "statuses": {r.dimension.key: r.status for r in ratings},
        "answers": {r.dimension.key: r.answers for r in ratings if r.answers},
        "rationales": {r.dimension.key: r.rationale for r in ratings if r.rationale},
        "ratings": ratings,
    }


class MyRatingApi(APIView):
    """A reviewer's own rating of one assigned idea: read it, or submit it (gates enforced)."""

    permission_classes = [IsReviewer]

    @extend_schema(
        tags=["ratings"],
        responses={200: MyRatingOutputSerializer, 403: ErrorSerializer, 404: ErrorSerializer},
    )
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        idea = _idea_for_reviewer(request, pk)
        assignment = assignment_for(reviewer=request.user, idea=idea)
        if assignment is None:
            raise PermissionDenied("This idea is not assigned to you.")
        screening = screening_of(reviewer=request.user, idea=idea, assignment=assignment)
        return Response(MyRatingOutputSerializer(_my_rating(screening, idea)).data)

    @extend_schema(
        tags=["ratings"],
        request=MyRatingInputSerializer,
        responses={200: MyRatingOutputSerializer, **ERROR_RESPONSES},
        description="Submit the complete screening of the idea. Open stages must be scored, closed "
        "ones left out; lowering an upstream score closes the downstream stages again.",
    )
    def put(self, request: AuthenticatedRequest, pk: int) -> Response:
        idea = _idea_for_reviewer(request, pk)
        data = _valid(MyRatingInputSerializer, request)
        screening = rating_submit(
            reviewer=request.user,
            idea=idea,
            scores=data["scores"],
            answers=data.get("answers"),
            rationales=data.get("rationales"),
            source=Rating.Source.API,
        )
        return Response(MyRatingOutputSerializer(_my_rating(screening, idea)).data)

    @extend_schema(
        tags=["ratings"],
        request=MyRatingInputSerializer,
        responses={200: MyRatingOutputSerializer, **ERROR_RESPONSES},
        description="Same as PUT.",
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        return self.put(request, pk)


class IdeaDeclineApi(APIView):
    permission_classes = [IsReviewer]

    @extend_schema(
        tags=["ratings"],
        request=DeclineInputSerializer,
        responses={200: AssignmentOutputSerializer, **ERROR_RESPONSES},
        description="Recuse yourself from an assigned idea; every dimension is stored as declined.",
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        idea = _idea_for_reviewer(request, pk)
        data = _valid(DeclineInputSerializer, request)
        assignment = rating_decline(
            reviewer=request.user,
            idea=idea,
            reason=data.get("reason", ""),
            source=Rating.Source.API,
        )
        assignment = assignment_list().get(pk=assignment.pk)
        return Response(AssignmentOutputSerializer(assignment).data)


# ---- assignments -----------------------------------------------------------------------------
class AssignmentListApi(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        tags=["assignments"],
        parameters=[AssignmentFilterSerializer, *PAGINATION_PARAMETERS],
        operation_id="assignments_list",
        responses=paginated_schema("PaginatedAssignmentList", AssignmentOutputSerializer),
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        filters = query_filters(AssignmentFilterSerializer, request)
        qs = assignment_list(
            reviewer_id=filters.get("reviewer"),
            idea_id=filters.get("idea"),
            domain_key=filters.get("domain"),
            status=filters.get("status"),
        )
        return paginated_response(
            request=request, view=self, queryset=qs, serializer_class=AssignmentOutputSerializer
        )

    @extend_schema(
        tags=["assignments"],
        request=AssignmentCreateInputSerializer,
        responses={
            200: AssignmentCreateOutputSerializer,
            201: AssignmentCreateOutputSerializer,
            **ERROR_RESPONSES,
        },
        description="Assign one idea (idea) or several (ideas) to a reviewer qualified for "
        "their domain. "
        "Idempotent: existing assignments are returned; 201 when something new was created.",
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        data = _valid(AssignmentCreateInputSerializer, request)
        ideas = data["ideas"] if "ideas" in data else [data["idea"]]
        before = Assignment.objects.filter(reviewer=data["reviewer"]).count()
        made = assignments_create(reviewer=data["reviewer"], ideas=ideas, actor=request.user)
        created = Assignment.objects.filter(reviewer=data["reviewer"]).count() - before
        rows = assignment_list().filter(pk__in=[a.pk for a in made])
        body = {"created": created, "assignments": AssignmentOutputSerializer(rows, many=True).data}
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class AssignmentDetailApi(APIView):
    permission_classes = [IsAdmin]

    def _get(self, pk: int) -> Assignment:
        assignment = assignment_list().filter(pk=pk).first()
        if assignment is None:
            raise NotFound(f"No assignment with id {pk}.")
        return assignment

    @extend_schema(
        tags=["assignments"], responses={200: AssignmentOutputSerializer, 404: ErrorSerializer}
    )
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        return Response(AssignmentOutputSerializer(self._get(pk)).data)

    @extend_schema(
        tags=["assignments"],
        responses={204: None, **ERROR_RESPONSES},
        description="Remove an assignment that is still to rate.",
    )
    def delete(self, request: AuthenticatedRequest, pk: int) -> Response:
        assignment_delete(assignment=self._get(pk), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class AssignmentBulkBalancedApi(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        tags=["assignments"],
        request=AssignmentBulkBalancedInputSerializer,
        responses={200: AssignmentBulkBalancedOutputSerializer, **ERROR_RESPONSES},
        description="Give every idea of the domain per_idea reviewers of that domain, choosing the "
        "least-loaded reviewers first. Safe to repeat: a second run creates nothing.",
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        data = _valid(AssignmentBulkBalancedInputSerializer, request)
        created = assignment_bulk_balanced(
            domain=data["domain"],
            per_idea=data["per_idea"],
            actor=request.user,
            reviewers=data.get("reviewers"),
        )
        return Response({"created": created})


class ReviewerLoadApi(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        tags=["assignments"],
        parameters=[DomainFilterSerializer],
        responses=ReviewerLoadOutputSerializer(many=True),
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        rows = reviewer_load()
        domain = query_filters(DomainFilterSerializer, request).get("domain")
        if domain:
            rows = [r for r in rows if r.domain.key == domain]
        return Response(ReviewerLoadOutputSerializer(rows, many=True).data)


class MyAssignmentListApi(APIView):
    permission_classes = [IsReviewer]

    @extend_schema(
        tags=["assignments"],
        parameters=[MyAssignmentFilterSerializer, *PAGINATION_PARAMETERS],
        operation_id="my_assignments_list",
        responses=paginated_schema("PaginatedMyAssignmentList", AssignmentOutputSerializer),
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        status_filter = query_filters(MyAssignmentFilterSerializer, request).get("status")
        qs = assignment_queue_for(reviewer=request.user, status=status_filter)
        qs = qs.select_related("reviewer", "assigned_by")
        return paginated_response(
            request=request, view=self, queryset=qs, serializer_class=AssignmentOutputSerializer
        )
