"""The admin's pages for import jobs: a large upload's progress, then its outcome (issue 29.2).

The import page's panel shows the job's polled partial right after the upload (views.
import_upload); these views serve that partial, the job's own page (the no-JavaScript path
and a link to keep), and every problem of a failed job as CSV."""

from __future__ import annotations

from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from apps.accounts.permissions import role_required
from apps.accounts.requests import AuthenticatedHttpRequest
from apps.catalog.models import ImportJob
from apps.core.csv_export import csv_response

RECENT_JOBS = 10


def _get_job(job_id: int) -> ImportJob:
    job = ImportJob.objects.select_related("created_by").filter(id=job_id).first()
    if job is None:
        raise Http404("No such import job.")
    return job


def recent_jobs() -> list[ImportJob]:
    return list(
        ImportJob.objects.select_related("created_by").order_by("-created_at", "-id")[:RECENT_JOBS]
    )


@role_required("admin")
@require_GET
def import_job(request: AuthenticatedHttpRequest, job_id: int) -> HttpResponse:
    return render(request, "catalog/import_job.html", {"job": _get_job(job_id)})


@role_required("admin")
@require_GET
def import_job_status(request: AuthenticatedHttpRequest, job_id: int) -> HttpResponse:
    """The polled partial (#import-job-<id>); it renders without the trigger once the job ended."""
    return render(request, "catalog/_import_job.html", {"job": _get_job(job_id)})


@role_required("admin")
@require_GET
def import_job_errors(request: AuthenticatedHttpRequest, job_id: int) -> StreamingHttpResponse:
    job = _get_job(job_id)
    rows = ([e.get("row"), e.get("field"), e.get("message"), e.get("value")] for e in job.errors)
    return csv_response(
        f"import-job-{job.id}-problems.csv", ["row", "field", "message", "value"], rows
    )
