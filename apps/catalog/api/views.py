"""Catalog API: domains, patents and ideas. Every signed-in role reads; only admins write.

Reviewers see only the patents and ideas of their own domains (apps/catalog/api/access.py).
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import ReadAnyWriteAdmin
from apps.accounts.requests import AuthenticatedRequest
from apps.catalog.api.access import ideas_visible_to, patents_visible_to
from apps.catalog.api.serializers import (
    DomainInputSerializer,
    DomainOutputSerializer,
    IdeaFilterSerializer,
    IdeaInputSerializer,
    IdeaOutputSerializer,
    PatentFilterSerializer,
    PatentInputSerializer,
    PatentOutputSerializer,
)
from apps.catalog.models import Domain
from apps.catalog.services.catalog import (
    domain_create,
    domain_update,
    idea_create,
    idea_update,
    patent_create,
    patent_update,
)
from apps.core.api import (
    ERROR_RESPONSES,
    PAGINATION_PARAMETERS,
    paginated_response,
    paginated_schema,
    query_filters,
)
from apps.core.errors import NotFound


def _get(queryset: QuerySet, pk: int, what: str) -> Any:
    obj = queryset.filter(pk=pk).first()
    if obj is None:
        raise NotFound(f"No {what} with id {pk} is visible to you.")
    return obj


def _input(
    serializer_class: type, request: AuthenticatedRequest, *, partial: bool = False
) -> dict[str, Any]:
    serializer = serializer_class(data=request.data, partial=partial)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class DomainListApi(APIView):
    permission_classes = [ReadAnyWriteAdmin]

    @extend_schema(
        tags=["catalog"],
        parameters=PAGINATION_PARAMETERS,
        operation_id="domains_list",
        responses=paginated_schema("PaginatedDomainList", DomainOutputSerializer),
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        qs = Domain.objects.select_related("rubric").order_by("name")
        return paginated_response(
            request=request, view=self, queryset=qs, serializer_class=DomainOutputSerializer
        )

    @extend_schema(
        tags=["catalog"],
        request=DomainInputSerializer,
        responses={201: DomainOutputSerializer, **ERROR_RESPONSES},
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        domain = domain_create(data=_input(DomainInputSerializer, request), actor=request.user)
        return Response(DomainOutputSerializer(domain).data, status=status.HTTP_201_CREATED)


class DomainDetailApi(APIView):
    permission_classes = [ReadAnyWriteAdmin]

    @extend_schema(
        tags=["catalog"], responses={200: DomainOutputSerializer, 404: ERROR_RESPONSES[404]}
    )
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        return Response(DomainOutputSerializer(_get(Domain.objects.all(), pk, "domain")).data)

    @extend_schema(
        tags=["catalog"],
        request=DomainInputSerializer,
        responses={200: DomainOutputSerializer, **ERROR_RESPONSES},
    )
    def put(self, request: AuthenticatedRequest, pk: int) -> Response:
        return self._update(request, pk, partial=False)

    @extend_schema(
        tags=["catalog"],
        request=DomainInputSerializer,
        responses={200: DomainOutputSerializer, **ERROR_RESPONSES},
    )
    def patch(self, request: AuthenticatedRequest, pk: int) -> Response:
        return self._update(request, pk, partial=True)

    def _update(self, request: AuthenticatedRequest, pk: int, *, partial: bool) -> Response:
        domain = _get(Domain.objects.all(), pk, "domain")
        data = _input(DomainInputSerializer, request, partial=partial)
        return Response(
            DomainOutputSerializer(domain_update(domain=domain, data=data, actor=request.user)).data
        )


class PatentListApi(APIView):
    permission_classes = [ReadAnyWriteAdmin]

    @extend_schema(
        tags=["catalog"],
        parameters=[PatentFilterSerializer, *PAGINATION_PARAMETERS],
        operation_id="patents_list",
        responses=paginated_schema("PaginatedPatentList", PatentOutputSerializer),
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        qs = patents_visible_to(request.user)
        filters = query_filters(PatentFilterSerializer, request)
        if "domain" in filters:
            qs = qs.filter(domain__key=filters["domain"])
        return paginated_response(
            request=request,
            view=self,
            queryset=qs.order_by("external_id"),
            serializer_class=PatentOutputSerializer,
        )

    @extend_schema(
        tags=["catalog"],
        request=PatentInputSerializer,
        responses={201: PatentOutputSerializer, **ERROR_RESPONSES},
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        patent = patent_create(data=_input(PatentInputSerializer, request), actor=request.user)
        return Response(PatentOutputSerializer(patent).data, status=status.HTTP_201_CREATED)


class PatentDetailApi(APIView):
    permission_classes = [ReadAnyWriteAdmin]

    @extend_schema(
        tags=["catalog"], responses={200: PatentOutputSerializer, 404: ERROR_RESPONSES[404]}
    )
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        return Response(
            PatentOutputSerializer(_get(patents_visible_to(request.user), pk, "patent")).data
        )

    @extend_schema(
        tags=["catalog"],
        request=PatentInputSerializer,
        responses={200: PatentOutputSerializer, **ERROR_RESPONSES},
    )
    def put(self, request: AuthenticatedRequest, pk: int) -> Response:
        return self._update(request, pk, partial=False)

    @extend_schema(
        tags=["catalog"],
        request=PatentInputSerializer,
        responses={200: PatentOutputSerializer, **ERROR_RESPONSES},
    )
    def patch(self, request: AuthenticatedRequest, pk: int) -> Response:
        return self._update(request, pk, partial=True)

    def _update(self, request: AuthenticatedRequest, pk: int, *, partial: bool) -> Response:
        patent = _get(patents_visible_to(request.user), pk, "patent")
        data = _input(PatentInputSerializer, request, partial=partial)
        return Response(
            PatentOutputSerializer(patent_update(patent=patent, data=data, actor=request.user)).data
        )


class IdeaListApi(APIView):
    permission_classes = [ReadAnyWriteAdmin]

    @extend_schema(
        tags=["catalog"],
        parameters=[IdeaFilterSerializer, *PAGINATION_PARAMETERS],
        operation_id="ideas_list",
        responses=paginated_schema("PaginatedIdeaList", IdeaOutputSerializer),
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        qs = ideas_visible_to(request.user)
        filters = query_filters(IdeaFilterSerializer, request)
        if "domain" in filters:
            qs = qs.filter(patent__domain__key=filters["domain"])
        if "patent" in filters:
            qs = qs.filter(patent__external_id=filters["patent"])
        return paginated_response(
            request=request,
            view=self,
            queryset=qs.order_by("external_id"),
            serializer_class=IdeaOutputSerializer,
        )

    @extend_schema(
        tags=["catalog"],
        request=IdeaInputSerializer,
        responses={201: IdeaOutputSerializer, **ERROR_RESPONSES},
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        idea = idea_create(data=_input(IdeaInputSerializer, request), actor=request.user)
        return Response(IdeaOutputSerializer(idea).data, status=status.HTTP_201_CREATED)


class IdeaDetailApi(APIView):
    permission_classes = [ReadAnyWriteAdmin]

    @extend_schema(
        tags=["catalog"], responses={200: IdeaOutputSerializer, 404: ERROR_RESPONSES[404]}
    )
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        return Response(IdeaOutputSerializer(_get(ideas_visible_to(request.user), pk, "idea")).data)

    @extend_schema(
        tags=["catalog"],
        request=IdeaInputSerializer,
        responses={200: IdeaOutputSerializer, **ERROR_RESPONSES},
    )
    def put(self, request: AuthenticatedRequest, pk: int) -> Response:
        return self._update(request, pk, partial=False)

    @extend_schema(
        tags=["catalog"],
        request=IdeaInputSerializer,
        responses={200: IdeaOutputSerializer, **ERROR_RESPONSES},
    )
    def patch(self, request: AuthenticatedRequest, pk: int) -> Response:
        return self._update(request, pk, partial=True)

    def _update(self, request: AuthenticatedRequest, pk: int, *, partial: bool) -> Response:
        idea = _get(ideas_visible_to(request.user), pk, "idea")
        data = _input(IdeaInputSerializer, request, partial=partial)
        return Response(
            IdeaOutputSerializer(idea_update(idea=idea, data=data, actor=request.user)).data
        )
