from __future__ import annotations

from typing import Any

from django.contrib import admin, messages

from apps.core.errors import ApplicationError
from apps.judges import services
from apps.judges.forms import JudgeConfigForm
from apps.judges.models import JudgeConfig, JudgeHistory, JudgeRun


@admin.register(JudgeConfig)
class JudgeConfigAdmin(admin.ModelAdmin):
    form = JudgeConfigForm
    list_display = [
        "name",
        "kind",
        "backend",
        "model",
        "shots",
        "seeds",
        "confidence_threshold",
        "min_history",
        "is_active",
        "auto",
    ]
    list_filter = ["kind", "backend", "is_active", "auto"]
    search_fields = ["name", "model"]

    def save_model(self, request: Any, obj: JudgeConfig, form: Any, change: bool) -> None:
        # Through the services so every change leaves a JudgeHistory row.
        data = {f: getattr(obj, f) for f in services.CONFIG_FIELDS}
        try:
            if change:
                saved = services.judge_config_update(
                    config=JudgeConfig.objects.get(pk=obj.pk), by=request.user, **data
                )
            else:
                saved = services.judge_config_create(by=request.user, **data)
        except ApplicationError as exc:
            messages.error(request, str(exc))
            return
        obj.pk = saved.pk

    def delete_model(self, request: Any, obj: JudgeConfig) -> None:
        try:
            services.judge_config_delete(config=obj, by=request.user)
        except ApplicationError as exc:
            messages.error(request, str(exc))


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "purpose",
        "status",
        "reviewer",
        "domain",
        "done",
        "total",
        "calls",
        "created_at",
    ]
    list_filter = ["purpose", "status"]
    readonly_fields = [f.name for f in JudgeRun._meta.fields]

    def has_add_permission(self, request: Any) -> bool:
        return False


@admin.register(JudgeHistory)
class JudgeHistoryAdmin(admin.ModelAdmin):
    list_display = ["changed_at", "event", "run", "config", "changed_by"]
    list_filter = ["event"]
    readonly_fields = [f.name for f in JudgeHistory._meta.fields]

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False
