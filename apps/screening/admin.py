"""Django admin for rubrics, assignments and ratings. Ratings are read-only here: they change only
through the screening form, the API or an import, each of which writes the rating's history.
The "Import from file" button on the rubric and rating lists is added by apps.dataio.admin."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from apps.screening.models import Assignment, Dimension, Rating, RatingHistory, Rubric
from apps.screening.rubric_files import DIMENSION_FIELDS
from apps.screening.rubric_schema import dimension_shape_errors


class DimensionAdminForm(forms.ModelForm):
    """A dimension edited by hand gets the rubric file's checks on its JSON fields (shapes,
    apps.screening.rubric_schema) and on its gates: `requires` names other dimensions of the
    same rubric. Otherwise a typo here reaches the rating form and the importer as a 500."""

    class Meta:
        model = Dimension
        fields = ["key", *DIMENSION_FIELDS]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for error in dimension_shape_errors(cleaned):
            name = error.field.split(".")[0].split("[")[0]
            where = error.field if error.field != name else ""
            message = f"{where}: {error.message}" if where else error.message
            if name in self.fields and name not in self.errors:
                self.add_error(name, message)
        requires = cleaned.get("requires")
        rubric = getattr(self.instance, "rubric", None) if self.instance.rubric_id else None
        if isinstance(requires, list) and rubric is not None and "requires" not in self.errors:
            keys = set(Dimension.objects.filter(rubric=rubric).values_list("key", flat=True))
            unknown = [r for r in requires if r not in keys or r == cleaned.get("key")]
            if unknown:
                self.add_error(
                    "requires", f"must name other dimensions of this rubric (got {unknown})"
                )
        return cleaned


class DimensionInline(admin.StackedInline):
    model = Dimension
    form = DimensionAdminForm
    extra = 0
    ordering = ["position"]
    fields = ["key", *DIMENSION_FIELDS]


@admin.register(Rubric)
class RubricAdmin(admin.ModelAdmin):
    list_display = ["key", "name", "is_default", "dimension_count", "updated_at"]
    list_filter = ["is_default"]
    search_fields = ["key", "name"]
    inlines = [DimensionInline]

    @admin.display(description="Dimensions")
    def dimension_count(self, obj: Rubric) -> int:
        return obj.dimensions.count()


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["reviewer", "idea", "status", "assigned_by", "updated_at"]
    list_filter = ["status", "idea__patent__domain"]
    search_fields = ["reviewer__username", "idea__external_id", "idea__title"]
    list_select_related = ["reviewer", "idea", "assigned_by"]
    raw_id_fields = ["reviewer", "idea", "assigned_by"]


class RatingHistoryInline(admin.TabularInline):
    model = RatingHistory
    extra = 0
    can_delete = False
    fields = [
        "changed_at",
        "changed_by",
        "source",
        "old_status",
        "old_score",
        "new_status",
        "new_score",
        "old_rationale",
        "new_rationale",
    ]
    # Plain field names; the stubs widen `fields` to nested groups, which readonly_fields is not.
    readonly_fields = fields  # type: ignore[assignment]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    """Read-only for audit."""

    list_display = ["reviewer", "idea", "dimension", "status", "score", "source", "updated_at"]
    list_filter = ["status", "source", "dimension__rubric", "dimension"]
    search_fields = ["reviewer__username", "idea__external_id", "idea__title"]
    list_select_related = ["reviewer", "idea", "dimension"]
    inlines = [RatingHistoryInline]
    readonly_fields = [
        "reviewer",
        "idea",
        "dimension",
        "status",
        "score",
        "answers",
        "rationale",
        "source",
        "created_at",
        "updated_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
