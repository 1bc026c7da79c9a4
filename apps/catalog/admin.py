"""Django admin for the catalog, plus an "Import from file" view shared by the data models."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path

from apps.accounts.permissions import has_role
from apps.catalog.forms import AdminImportForm
from apps.catalog.models import Domain, Idea, Patent
from apps.catalog.services.import_jobs import import_upload_or_queue
from apps.catalog.services.imports import UploadOutcome

if TYPE_CHECKING:
    from django.template.response import _TemplateForResponseT


class ImportFromFileMixin:
    """Adds <changelist>/import/ and an "Import from file" button to a ModelAdmin."""

    import_kind = "patents"
    # Declared as ModelAdmin declares it, so the mixin combines with it.
    change_list_template: ClassVar[_TemplateForResponseT | None] = (
        "catalog/admin/change_list_import.html"
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
            "catalog/admin/import_form.html",
            context,
            status=200 if not outcome or outcome.ok else 400,
        )


@admin.register(Domain)
class DomainAdmin(admin.ModelAdmin):
    list_display = ["key", "name", "rubric"]
    search_fields = ["key", "name"]
    list_filter = ["rubric"]


@admin.register(Patent)
class PatentAdmin(ImportFromFileMixin, admin.ModelAdmin):
    import_kind = "patents"
    list_display = ["external_id", "title", "domain", "created_at"]
    list_filter = ["domain"]
    search_fields = ["external_id", "title", "abstract"]
    list_select_related = ["domain"]
    readonly_fields = ["created_at", "updated_at"]


@admin.register(Idea)
class IdeaAdmin(ImportFromFileMixin, admin.ModelAdmin):
    import_kind = "ideas"
    list_display = ["external_id", "title", "patent", "domain", "source"]
    list_filter = ["patent__domain", "source"]
    search_fields = ["external_id", "title", "description", "patent__external_id"]
    list_select_related = ["patent__domain"]
    raw_id_fields = ["patent"]
    readonly_fields = ["created_at", "updated_at"]

    @admin.display(ordering="patent__domain__name")
    def domain(self, obj: Idea) -> Domain:
        return obj.patent.domain
