"""The "Import from file" view and button on the Django admin's patent, idea, rubric and rating
lists.

The catalog and screening register their admin lists (their admin.py); this module, loaded after
them (apps load in INSTALLED_APPS order), registers them again with the import view added, so
neither knows the importers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path

from apps.accounts.permissions import has_role
from apps.catalog.admin import IdeaAdmin, PatentAdmin
from apps.catalog.models import Idea, Patent
from apps.dataio.forms import AdminImportForm
from apps.dataio.services.import_jobs import import_upload_or_queue
from apps.dataio.services.imports import UploadOutcome
from apps.screening.admin import RatingAdmin, RubricAdmin
from apps.screening.models import Rating, Rubric

if TYPE_CHECKING:
    from django.template.response import _TemplateForResponseT


class ImportFromFileMixin:
    """Adds <changelist>/import/ and an "Import from file" button to a ModelAdmin."""

    import_kind = "patents"
    # Declared as ModelAdmin declares it, so the mixin combines with it.
    change_list_template: ClassVar[_TemplateForResponseT | None] = (
        "dataio/admin/change_list_import.html"
    )

    def get_urls(self) -> list[URLPattern]:
        opts = self.model._meta  # type: ignore[attr-defined]
        own = [
            path(
                "import/",
                self.admin_site.admin_view(self.import_view),  # type: ignore[attr-defined]
                name=f"{opts.app_label}_{opts.model_name}_import",
            )
        ]
        return own + super().get_urls()  # type: ignore[misc]

    def import_view(self, request: HttpRequest) -> HttpResponse:
        if not has_role(request.user, ("admin",)):
            raise PermissionDenied("Only admins import data.")
        outcome: UploadOutcome | None = None
        if request.method == "POST":
            form = AdminImportForm(request.POST, request.FILES)
            if form.is_valid():
                outcome = import_upload_or_queue(
                    kind=form.cleaned_data["kind_choice"],
                    upload=form.cleaned_data["file"],
                    dry_run=form.cleaned_data["dry_run"],
                    actor=request.user,
                    make_default=form.cleaned_data.get("make_default", False),
                )
                if outcome.ok and outcome.result is not None:
                    messages.success(request, outcome.result.summary())
                if outcome.job is not None:
                    # A large file: the worker imports it; its page follows the progress.
                    return redirect("catalog:import_job", job_id=outcome.job.id)
        else:
            form = AdminImportForm(initial={"kind_choice": self.import_kind})
        context = {
            **self.admin_site.each_context(request),  # type: ignore[attr-defined]
            "title": "Import from file",
            "opts": self.model._meta,  # type: ignore[attr-defined]
            "form": form,
            "outcome": outcome,
        }
        return TemplateResponse(
            request,
            "dataio/admin/import_form.html",
            context,
            status=200 if not outcome or outcome.ok else 400,
        )


# Each list and the import kind its button opens with.
IMPORT_LISTS: tuple[tuple[type[Model], type[admin.ModelAdmin], str], ...] = (
    (Patent, PatentAdmin, "patents"),
    (Idea, IdeaAdmin, "ideas"),
    (Rubric, RubricAdmin, "rubric"),
    (Rating, RatingAdmin, "ratings"),
)
for model, model_admin, kind in IMPORT_LISTS:
    admin.site.unregister(model)
    admin.site.register(
        model,
        type(
            f"{model_admin.__name__}WithImport",
            (ImportFromFileMixin, model_admin),
            {"import_kind": kind, "__module__": __name__},
        ),
    )
