"""Django admin for the catalog. The "Import from file" button on the patent and idea lists is
added by apps.dataio.admin, which owns the imports."""

from __future__ import annotations

from django.contrib import admin

from apps.catalog.models import Domain, Idea, Patent


@admin.register(Domain)
class DomainAdmin(admin.ModelAdmin):
    list_display = ["key", "name", "rubric"]
    search_fields = ["key", "name"]
    list_filter = ["rubric"]


@admin.register(Patent)
class PatentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "title", "domain", "created_at"]
    list_filter = ["domain"]
    search_fields = ["external_id", "title", "abstract"]
    list_select_related = ["domain"]
    readonly_fields = ["created_at", "updated_at"]


@admin.register(Idea)
class IdeaAdmin(admin.ModelAdmin):
    list_display = ["external_id", "title", "patent", "domain", "source"]
    list_filter = ["patent__domain", "source"]
    search_fields = ["external_id", "title", "description", "patent__external_id"]
    list_select_related = ["patent__domain"]
    raw_id_fields = ["patent"]
    readonly_fields = ["created_at", "updated_at"]

    @admin.display(ordering="patent__domain__name")
    def domain(self, obj: Idea) -> Domain:
        return obj.patent.domain
