"""GET /api/imports/jobs/ and /api/imports/jobs/<id>/: the imports the worker does for uploads
above IMPORT_BACKGROUND_BYTES (POST /api/imports/<kind>/ answers 202 with the job's URL)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsAdmin
from apps.accounts.requests import AuthenticatedRequest
from apps.catalog.models import ImportJob
from apps.core.api import PAGINATION_PARAMETERS, paginated_response, paginated_schema
from apps.core.errors import NotFound


def job_url(job: ImportJob) -> str:
    return reverse("api-import-job-detail", kwargs={"pk": job.pk})


class ImportJobProgressSerializer(serializers.Serializer):
    bytes_read = serializers.IntegerField(
        help_text="Bytes of the file the import has read in its current pass."
    )
    size = serializers.IntegerField(help_text="Bytes of the uploaded file.")
    percent = serializers.IntegerField(help_text="bytes_read / size, 0 to 100.")
    stage = serializers.CharField(
        help_text="waiting, reading (the file is being read), storing (read; rows checked and "
        "stored) or done."
    )


class ImportJobResultSerializer(serializers.Serializer):
    kind = serializers.CharField()
    rows = serializers.IntegerField(help_text="Records read from the file.")
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    dry_run = serializers.BooleanField()
    notes = serializers.ListField(child=serializers.CharField())
    summary = serializers.CharField()


class ImportJobErrorSerializer(serializers.Serializer):
    row = serializers.IntegerField(
        allow_null=True, help_text="CSV: header is row 1. JSON Lines: line number."
    )
    field = serializers.CharField()
    message = serializers.CharField()
    value = serializers.CharField(allow_null=True)


def _stage(job: ImportJob) -> str:
    if not job.is_active:
        return "done"
    if job.status == ImportJob.Status.QUEUED:
        return "waiting"
    return "storing" if job.bytes_read >= job.size else "reading"


class ImportJobOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    kind = serializers.CharField()
    filename = serializers.CharField()
    size = serializers.IntegerField()
    status = serializers.ChoiceField(choices=ImportJob.Status.choices)
    options = serializers.DictField(
        help_text="dry_run, make_default, domains, create_domains, as posted."
    )
    created_by = serializers.CharField(source="created_by.username", allow_null=True, default=None)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    attempts = serializers.IntegerField(
        help_text="Deliveries to a worker; more than 1 when a worker stopped mid-import."
    )
    progress = serializers.SerializerMethodField()
    result = ImportJobResultSerializer(
        allow_null=True, help_text="Once succeeded: what was stored (or, for a dry run, would be)."
    )
    detail = serializers.CharField(source="message", help_text="Once failed: why.")
    # Named as in the 400 body of a refused import; it shadows Serializer.errors (validation
    # errors), which an output-only serializer never uses.
    errors = ImportJobErrorSerializer(  # type: ignore[assignment]
        many=True, help_text="Once failed: every problem, naming the row, field and value."
    )

    class Meta:
        ref_name = "ImportJob"

    @extend_schema_field(OpenApiTypes.STR)
    def get_url(self, job: ImportJob) -> str:
        return job_url(job)

    @extend_schema_field(ImportJobProgressSerializer)
    def get_progress(self, job: ImportJob) -> dict[str, Any]:
        return {
            "bytes_read": job.bytes_read,
            "size": job.size,
            "percent": job.percent_read if job.is_active else 100,
            "stage": _stage(job),
        }


class ImportJobListApi(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        operation_id="imports_jobs_list",
        summary="Import jobs, newest first (admins only)",
        tags=["imports"],
        parameters=PAGINATION_PARAMETERS,
        responses=paginated_schema("PaginatedImportJobList", ImportJobOutputSerializer),
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        qs = ImportJob.objects.select_related("created_by").order_by("-created_at", "-id")
        return paginated_response(
            request=request, view=self, queryset=qs, serializer_class=ImportJobOutputSerializer
        )


class ImportJobDetailApi(APIView):
    permission_classes = [IsAdmin]

    @extend_schema(
        operation_id="imports_jobs_retrieve",
        summary="One import job: status, progress, counts or errors (admins only)",
        description=(
            "Poll it after a 202 from POST /api/imports/<kind>/. status is queued, running, "
            "succeeded (result holds the counts) or failed (detail and errors say why; nothing "
            "was imported). A job whose worker stopped is sent to a worker again by itself "
            "(attempts counts the deliveries)."
        ),
        tags=["imports"],
        responses={
            200: ImportJobOutputSerializer,
            404: OpenApiResponse(description="No such job."),
        },
    )
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        job = ImportJob.objects.select_related("created_by").filter(pk=pk).first()
        if job is None:
            raise NotFound("No import job with this id.")
        return Response(ImportJobOutputSerializer(job).data)
