"""Admins edit personas here (name, description, dimensions, evidence, active)."""

from django.contrib import admin
from django.http import HttpRequest

from apps.panels.models import PanelRun, Persona, PersonaDocument


@admin.register(Persona)
class PersonaAdmin(admin.ModelAdmin):
    list_display = ("name", "domain", "source", "reviewer", "active", "model", "updated_at")
    list_filter = ("domain", "source", "active")
    search_fields = ("name", "description")
    raw_id_fields = ("reviewer",)


@admin.register(PersonaDocument)
class PersonaDocumentAdmin(admin.ModelAdmin):
    list_display = ("title", "domain", "status", "stakeholders_found", "created_at")
    list_filter = ("domain", "status")
    readonly_fields = ("status", "error", "stakeholders_found", "uploaded_by")


@admin.register(PanelRun)
class PanelRunAdmin(admin.ModelAdmin):
    """Read-only: runs are started from the panels page and written by workers."""

    list_display = ("id", "domain", "persona_source", "status", "model", "calls", "created_at")
    list_filter = ("domain", "persona_source", "status")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
