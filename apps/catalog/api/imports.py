"""POST a file to /api/imports/<kind>/: the same import as the admin page and the CLI."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts.permissions import IsAdmin
from apps.accounts.requests import AuthenticatedRequest
from apps.catalog.api.import_jobs import ImportJobOutputSerializer, job_url
from apps.catalog.services.import_jobs import import_upload_or_queue
from apps.catalog.services.imports import IMPORT_KINDS


class ImportCreateApi(APIView):
    permission_classes = [IsAdmin]
    parser_classes = [MultiPartParser, FormParser]

    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(
            help_text="CSV or JSON Lines; YAML or JSON for a rubric (see docs/formats.md)."
        )
        dry_run = serializers.BooleanField(
            default=False, help_text="Validate and count only; store nothing."
        )
        default = serializers.BooleanField(
            default=False, help_text="Rubric only: make it the default rubric."
        )
        domains = serializers.CharField(
            default="",
            allow_blank=True,
            max_length=2000,
            help_text="Rubric only: comma-separated domain keys to attach the rubric to.",
        )
        create_domains = serializers.BooleanField(
            default=False,
            help_text="Patents and rubrics: create the domains the file names that do not exist "
            "yet. Once the installation holds ratings, an unknown domain is refused without it.",
        )

        class Meta:
            # Unique component names: other APIs nest serializers called InputSerializer too.
            ref_name = "ImportUpload"

    class OutputSerializer(serializers.Serializer):
        kind = serializers.CharField()
        rows = serializers.IntegerField(help_text="Records read from the file.")
        created = serializers.IntegerField()
        updated = serializers.IntegerField()
        unchanged = serializers.IntegerField()
        dry_run = serializers.BooleanField()
        notes = serializers.ListField(child=serializers.CharField())
        summary = serializers.CharField()

        class Meta:
            ref_name = "ImportResult"

    ErrorSerializer = inline_serializer(
        name="ImportErrors",
        fields={
            "detail": serializers.CharField(),
            "errors": inline_serializer(
                name="ImportFieldError",
                fields={
                    "row": serializers.IntegerField(
                        allow_null=True, help_text="CSV: header is row 1. JSON Lines: line number."
                    ),
                    "field": serializers.CharField(),
                    "message": serializers.CharField(),
                    "value": serializers.CharField(allow_null=True),
                },
                many=True,
            ),
        },
    )

    @extend_schema(
        operation_id="imports_create",
        summary="Import a file (admins only)",
        description=(
            "Validates the whole file and stores it all or nothing. Records are upserted by their "
            "natural key, so re-sending a file changes nothing. 201 after a real import, 200 after "
            "a dry run, 400 with every problem (row, field, message, value) when the file is "
            "refused. A file larger than IMPORT_BACKGROUND_BYTES (1 MiB by default) is imported "
            "by the worker: once its shape is checked (an empty file, the wrong type, a header "
            "too wide, a line too long are a 400 at once), the answer is 202 with the import "
            "job, whose `url` (also the Location header) gives its status, progress and then the "
            "counts or every error: GET /api/imports/jobs/{id}/. 429 when the admin already has "
            "IMPORT_MAX_ACTIVE_JOBS imports queued or running."
        ),
        tags=["imports"],
        parameters=[
            OpenApiParameter(
                "kind", OpenApiTypes.STR, OpenApiParameter.PATH, enum=list(IMPORT_KINDS)
            )
        ],
        request={"multipart/form-data": InputSerializer},
        responses={
            201: OutputSerializer,
            200: OpenApiResponse(OutputSerializer, description="Dry run: what would be stored."),
            400: OpenApiResponse(
                ErrorSerializer,
                description="The file was refused; nothing changed.",
                examples=[
                    OpenApiExample(
                        "Unknown idea",
                        value={
                            "detail": (
                                "The ratings file has errors. 1 problem found; nothing was "
                                "imported."
                            ),
                            "errors": [
                                {
                                    "row": 7,
                                    "field": "idea",
                                    "message": (
                                        "is not the external_id of a stored idea; "
                                        "import the ideas first"
                                    ),
                                    "value": "idea-999",
                                }
                            ],
                        },
                    )
                ],
            ),
            202: OpenApiResponse(
                ImportJobOutputSerializer,
                description="A large file, queued for the worker: poll the job's url.",
            ),
            403: OpenApiResponse(description="Not an admin."),
            429: OpenApiResponse(
                ErrorSerializer, description="Too many imports of this admin queued or running."
            ),
        },
    )
    def post(self, request: AuthenticatedRequest, kind: str) -> Response:
        data = self.InputSerializer(data=request.data)
        if not data.is_valid():
            errors = [
                {"row": None, "field": name, "message": str(msg), "value": None}
                for name, msgs in data.errors.items()
                for msg in msgs
            ]
            return Response(
                {"detail": "The request is incomplete.", "errors": errors},
                status=status.HTTP_400_BAD_REQUEST,
            )
        outcome = import_upload_or_queue(
            kind=kind,
            upload=data.validated_data["file"],
            dry_run=data.validated_data["dry_run"],
            actor=request.user,
            make_default=data.validated_data["default"],
            domains=[d for d in data.validated_data["domains"].split(",") if d.strip()],
            create_domains=data.validated_data["create_domains"],
        )
        if outcome.throttled:
            return Response(outcome.error_body(), status=status.HTTP_429_TOO_MANY_REQUESTS)
        if outcome.ok and outcome.job is not None:
            url = job_url(outcome.job)
            body = ImportJobOutputSerializer(outcome.job).data
            return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": url})
        if not outcome.ok or outcome.result is None:
            return Response(outcome.error_body(), status=status.HTTP_400_BAD_REQUEST)
        result = outcome.result
        body = self.OutputSerializer({**result.as_dict(), "summary": result.summary()}).data
        return Response(
            body, status=status.HTTP_200_OK if result.dry_run else status.HTTP_201_CREATED
        )
