"""The admin's data page: what is stored, and one upload form per import kind."""

from __future__ import annotations

import re
import tempfile
from typing import IO, cast

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from apps.accounts.permissions import role_required
from apps.accounts.requests import AuthenticatedHttpRequest
from apps.catalog.format_docs import (
    CONTENT_TYPES,
    SECTION_TITLES,
    example_path,
    examples_for,
    format_doc,
)
from apps.catalog.forms import ImportForm
from apps.catalog.import_job_views import recent_jobs
from apps.catalog.models import Domain, Idea, Patent
from apps.catalog.services import archive
from apps.catalog.services.import_jobs import import_upload_or_queue
from apps.catalog.services.imports import IMPORT_KINDS, UploadOutcome
from apps.core.errors import ApplicationError, FieldError
from apps.screening.models import Rating, RatingHistory, Rubric

KIND_HELP = {
    "rubric": "YAML or JSON: the dimensions, their scales, level meanings and gates.",
    "patents": "CSV or JSON Lines: external_id, domain, title, abstract, claims.",
    "ideas": (
        "CSV or JSON Lines: external_id, patent, title, description, implementation, "
        "differentiation, source."
    ),
    "reviewers": "CSV or JSON Lines: username, email, name, background, domains, years_experience.",
    "ratings": (
        "CSV or JSON Lines, one row per idea, reviewer and dimension: idea, reviewer, "
        "dimension, score."
    ),
}


def _counts() -> list[tuple[str, int]]:
    User = get_user_model()
    return [
        ("Domains", Domain.objects.count()),
        ("Patents", Patent.objects.count()),
        ("Ideas", Idea.objects.count()),
        ("Reviewers", User.objects.filter(role=User.Role.REVIEWER).count()),
        ("Scored ratings", Rating.objects.filter(status=Rating.Status.SCORED).count()),
        # Decide counts every stored rating (and says which enter its estimate).
        ("Ratings stored in all", Rating.objects.count()),
        ("Rubrics", Rubric.objects.count()),
    ]


def _panel(kind: str, form: ImportForm, outcome: UploadOutcome | None = None) -> dict:
    return {
        "kind": kind,
        "step": IMPORT_KINDS.index(kind) + 1,
        "title": kind.title(),
        "help": KIND_HELP[kind],
        "form": form,
        "outcome": outcome,
        "examples": examples_for(kind),
    }


def _page_context(panels: list[dict]) -> dict:
    return {
        "counts": _counts(),
        "panels": panels,
        "default_rubric": Rubric.objects.filter(is_default=True).first(),
        "jobs": recent_jobs(),
        "background_bytes": settings.IMPORT_BACKGROUND_BYTES,
    }


@role_required("admin")
def admin_home(request: AuthenticatedHttpRequest) -> HttpResponse:
    panels = [_panel(kind, ImportForm(kind=kind)) for kind in IMPORT_KINDS]
    return render(request, "catalog/admin_home.html", _page_context(panels))


@role_required("admin")
@require_http_methods(["POST"])
def import_upload(request: AuthenticatedHttpRequest, kind: str) -> HttpResponse:
    """Run one upload. htmx swaps just this kind's panel; without JS the whole page re-renders."""
    if kind not in IMPORT_KINDS:
        raise Http404("Unknown import kind.")
    form = ImportForm(request.POST, request.FILES, kind=kind)
    outcome: UploadOutcome | None = None
    if form.is_valid():
        # Above IMPORT_BACKGROUND_BYTES a job for the worker; the panel then polls it.
        outcome = import_upload_or_queue(
            kind=kind,
            upload=form.cleaned_data["file"],
            dry_run=form.cleaned_data["dry_run"],
            actor=request.user,
            make_default=form.cleaned_data.get("make_default", False),
            create_domains=form.cleaned_data.get("create_domains", False),
        )
        if outcome.ok:
            form = ImportForm(kind=kind)
    panel = _panel(kind, form, outcome)
    if request.htmx:
        # htmx swaps only 2xx responses; the panel itself shows the errors.
        return render(request, "catalog/_import_panel.html", {"panel": panel})
    if outcome is not None and outcome.job is not None:
        # Without JavaScript: the job's own page, which says how to follow it.
        return redirect("catalog:import_job", job_id=outcome.job.id)
    status = 200 if outcome is None or outcome.ok else 400
    panels = [panel if k == kind else _panel(k, ImportForm(kind=k)) for k in IMPORT_KINDS]
    return render(request, "catalog/admin_home.html", _page_context(panels), status=status)


@login_required
def format_help(request: AuthenticatedHttpRequest, kind: str) -> HttpResponse:
    """One import format, rendered from docs/formats.md, with its example files."""
    if kind not in SECTION_TITLES:
        raise Http404("Unknown import kind.")
    section, common = format_doc(kind)
    context = {
        "kind": kind,
        "title": SECTION_TITLES[kind],
        "section": section,
        "common": common,
        "examples": examples_for(kind),
        "kinds": [(k, SECTION_TITLES[k]) for k in IMPORT_KINDS],
    }
    return render(request, "catalog/format_help.html", context)


@login_required
def example_file(request: AuthenticatedHttpRequest, name: str) -> FileResponse:
    """Download one example file from docs/examples/ (only the listed names)."""
    path = example_path(name)
    if path is None:
        raise Http404("No example file of that name.")
    content_type = CONTENT_TYPES.get(path.suffix, "text/plain")
    return FileResponse(
        path.open("rb"), as_attachment=True, filename=name, content_type=content_type
    )


# ---- the whole installation as one archive ---------------------------------------------------
class ArchiveForm(forms.Form):
    file = forms.FileField(label="Archive (.zip)")


def _archive_page(
    request: AuthenticatedHttpRequest, *, form: ArchiveForm, outcome: dict | None, status: int = 200
) -> HttpResponse:
    counts = {
        "ratings": Rating.objects.count(),
        "scored": Rating.objects.filter(status=Rating.Status.SCORED).count(),
        "history": RatingHistory.objects.count(),
        "ideas": Idea.objects.count(),
    }
    context = {
        "counts": counts,
        "empty": archive.installation_is_empty(),
        "form": form,
        "outcome": outcome,
    }
    return render(request, "catalog/archive.html", context, status=status)


@role_required("admin")
def archive_home(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _archive_page(request, form=ArchiveForm(), outcome=None)


ARCHIVE_TOKEN = re.compile(r"[a-z0-9]{8,32}")


@role_required("admin")
@require_http_methods(["POST"])
def archive_export(request: AuthenticatedHttpRequest) -> FileResponse:
    # Written to a temporary file (kept in memory while small), not built as one bytes object.
    out = tempfile.SpooledTemporaryFile(max_size=16 * 1024 * 1024)
    report = archive.installation_export_to(out, actor=request.user)
    out.seek(0)
    name = timezone.now().strftime("pluralist-%Y%m%d-%H%M%S.zip")
    response = FileResponse(out, content_type="application/zip", as_attachment=True, filename=name)
    if report.warnings:
        # The manifest keeps them too; a script downloading the archive reads them here.
        response["X-Archive-Warnings"] = str(len(report.warnings))
    token = request.POST.get("token", "")
    if ARCHIVE_TOKEN.fullmatch(token):
        # The page waits for this cookie to say the download has started (static/js/archive.js):
        # a download never reaches the page's JavaScript any other way.
        response.set_cookie(
            "archive_download", token, max_age=120, path="/", samesite="Strict", httponly=False
        )
    return response


@role_required("admin")
@require_http_methods(["POST"])
def archive_import(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = ArchiveForm(request.POST, request.FILES)
    if not form.is_valid():
        return _archive_page(request, form=form, outcome=None, status=400)
    upload = form.cleaned_data["file"]
    try:
        if (upload.size or 0) > settings.ARCHIVE_MAX_BYTES:
            raise ApplicationError(
                "The archive is too large; nothing was imported.",
                errors=[
                    FieldError(
                        field="file",
                        message=f"is {upload.size} bytes; at most {settings.ARCHIVE_MAX_BYTES} "
                        "(ARCHIVE_MAX_BYTES)",
                    )
                ],
            )
        results = archive.installation_import(content=cast(IO[bytes], upload), actor=request.user)
    except ApplicationError as exc:
        outcome = {"ok": False, "message": exc.message, "errors": exc.errors}
        return _archive_page(request, form=form, outcome=outcome, status=400)
    return _archive_page(request, form=ArchiveForm(), outcome={"ok": True, "results": results})
