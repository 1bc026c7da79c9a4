"""What every dashboard page shares: the filters, the snapshot of their scope, freshness."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from apps.accounts.permissions import role_required
from apps.accounts.requests import AuthenticatedHttpRequest
from apps.catalog.models import Domain
from apps.disagreement import presenters as P
from apps.disagreement import selectors
from apps.disagreement.forms import DashboardFilterForm
from apps.disagreement.models import Level, MetricSnapshot, scope_key
from apps.screening.selectors import frame as ratings

managers_only = role_required("manager", "admin")


@dataclass
class Dashboard:
    """What every dashboard page shows above its chart: filters, snapshot and freshness."""

    form: DashboardFilterForm
    domain: str | None
    dimension: str | None
    background: str | None
    level: str
    include_categories: bool
    since: Any
    until: Any
    scope: str
    snapshot: MetricSnapshot | None
    in_progress: MetricSnapshot | None
    failure: MetricSnapshot | None
    freshness: selectors.Freshness | None
    labels: dict[str, str]
    domain_names: dict[str, str]
    query: str

    @property
    def result(self) -> dict[str, Any]:
        return (self.snapshot.result or {}) if self.snapshot else {}

    @property
    def focus_domain(self) -> str:
        return self.domain or P.ALL

    @property
    def focus_domain_name(self) -> str:
        return P.label_domain(self.focus_domain, self.domain_names)

    @property
    def dimension_name(self) -> str:
        return self.labels.get(self.dimension, self.dimension) if self.dimension else ""

    @property
    def groups(self) -> list[str]:
        return P.groups_in(self.result)

    @property
    def category_levels(self) -> dict[str, list[int]]:
        return self.result.get("categories", {}).get("levels", {})

    def context(self, **extra: Any) -> dict[str, Any]:
        # Filters a page does not apply are not offered (the template hides them).
        return {"dash": self, "hidden_filters": (), **extra}


def dashboard_for(request: AuthenticatedHttpRequest) -> Dashboard:
    labels = ratings.dimension_labels()
    form = DashboardFilterForm(
        request.GET, dimension_labels=labels, backgrounds=selectors.background_groups()
    )
    level = form.value("level") or Level.ORDINAL
    include_categories = form.value("categories") == "include"
    since, until = form.value("since"), form.value("until")
    scope = scope_key(level=level, since=since, until=until, include_categories=include_categories)
    snapshot = selectors.snapshot_latest(scope=scope)
    in_progress = selectors.snapshot_in_progress(scope=scope)
    failure = selectors.snapshot_last_failure(
        scope=scope, after=snapshot.created_at if snapshot else None
    )
    params = {k: v for k, v in request.GET.items() if k in form.fields and v}
    return Dashboard(
        form=form,
        domain=form.value("domain"),
        dimension=form.value("dimension"),
        background=form.value("background"),
        level=level,
        include_categories=include_categories,
        since=since,
        until=until,
        scope=scope,
        snapshot=snapshot,
        in_progress=in_progress,
        failure=failure,
        freshness=selectors.snapshot_freshness(snapshot) if snapshot else None,
        labels=labels,
        domain_names=dict(Domain.objects.values_list("key", "name")),
        query=urlencode(params),
    )
