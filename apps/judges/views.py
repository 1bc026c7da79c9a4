"""Judge pages: alignment dashboard, runs and studies, cases, predictions, "my judge"."""

from __future__ import annotations

import csv
import statistics
from collections import defaultdict
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.accounts.models import User
from apps.accounts.permissions import has_role, role_required
from apps.catalog.models import Domain, Idea
from apps.core.errors import ApplicationError
from apps.judges import selectors, services
from apps.judges.forms import PredictionFilterForm, StudyForm
from apps.judges.models import LOCAL_LABEL, JudgeConfig, JudgeRun
from apps.screening.models import Rating

KIND_LABELS = dict(JudgeConfig.Kind.choices)
KIND_COLOURS = {"zero_shot": "#8a94a6", "aggregate": "#d9822b", "personalized": "#2f6fde"}


def _domain_from(request: HttpRequest) -> Domain | None:
    key = request.GET.get("domain") or ""
    return Domain.objects.filter(key=key).first() if key else None


def _csv_response(filename: str, header: list[str], rows: list[list[Any]]) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    writer.writerow(header)
    writer.writerows(rows)
    return response


def _chart_series(report: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    """Per dimension, one line per configuration: alpha against k (paper 001, Figure 2)."""
    by_dim: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for row in report["curve"]:
        by_dim[row["dimension"]][row["kind"]].append(row)
    charts = []
    for dim in sorted(by_dim, key=lambda d: list(names).index(d) if d in names else 99):
        datasets = [
            {
                "label": KIND_LABELS.get(kind, kind),
                "kind": kind,
                "color": KIND_COLOURS.get(kind, "#555"),
                "points": [{"x": r["k"], "y": r["alpha"], "n": r["n"]} for r in rows],
            }
            for kind, rows in sorted(
                by_dim[dim].items(), key=lambda kv: list(KIND_LABELS).index(kv[0])
            )
        ]
        missing = [d["label"] for d in datasets if all(p["y"] is None for p in d["points"])]
        charts.append(
            {
                "dimension": dim,
                "name": names.get(dim, dim),
                "datasets": datasets,
                "missing": missing,
                "rows": [r for rows in by_dim[dim].values() for r in rows],
            }
        )
    return charts


def _coarse_rows(report: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for r in report["coarse"]:
        row = table.setdefault(
            r["dimension"],
            {"dimension": r["dimension"], "name": names.get(r["dimension"], r["dimension"])},
        )
        row[r["kind"]] = r
    return [
        table[d] for d in sorted(table, key=lambda d: list(names).index(d) if d in names else 99)
    ]


def _discard_matrix(
    report: dict[str, Any], names: dict[str, str]
) -> tuple[list[str], list[dict[str, Any]]]:
    domains = sorted({r["domain"] for r in report["discard"]})
    rows: dict[str, dict[str, Any]] = {}
    for r in report["discard"]:
        rows.setdefault(
            r["dimension"], {"name": names.get(r["dimension"], r["dimension"]), "cells": {}}
        )
        rows[r["dimension"]]["cells"][r["domain"]] = r
    ordered = [
        {"name": rows[d]["name"], "cells": [rows[d]["cells"].get(dom) for dom in domains]}
        for d in sorted(rows, key=lambda d: list(names).index(d) if d in names else 99)
    ]
    return domains, ordered


@role_required("manager", "admin")
def alignment(request: HttpRequest) -> HttpResponse:
    domain = _domain_from(request)
    source = request.GET.get("source") or "auto"
    run_ids = selectors.report_run_ids(source=source, domain=domain)
    report = selectors.alignment_report(run_ids=run_ids)
    names = selectors.dimension_names()
    discard_domains, discard_rows = _discard_matrix(report, names)
    gaps = [g for g in selectors.history_gaps() if g["missing"] and g["n"]]
    context = {
        "domains": Domain.objects.order_by("name"),
        "domain": domain,
        "source": source,
        "sources": selectors.report_sources(domain=domain),
        "report": report,
        "charts": _chart_series(report, names),
        "coarse_rows": _coarse_rows(report, names),
        "discard_domains": discard_domains,
        "discard_rows": discard_rows,
        "reasoning": [
            {
                **r,
                "label": KIND_LABELS.get(r["kind"], r["kind"]),
                "color": KIND_COLOURS.get(r["kind"], "#555"),
            }
            for r in report["reasoning"]
        ],
        "kinds": [(k, KIND_LABELS[k]) for k in KIND_LABELS],
        "gaps": gaps[:12],
        "n_gaps": len(gaps),
        **_runs_context(request, limit=8),
        "query": request.GET.urlencode(),
        "local_label": LOCAL_LABEL,
        "uses_local": JudgeConfig.objects.filter(
            is_active=True, backend=JudgeConfig.Backend.LOCAL
        ).exists(),
        "case_ideas": _case_ideas(run_ids),
    }
    coarse_rows = context["coarse_rows"]
    context["coarse_chart"] = {
        "labels": [r["name"] for r in coarse_rows],
        "ylabel": "above-median Jaccard",
        "datasets": [
            {
                "label": label,
                "color": KIND_COLOURS[kind],
                "data": [(r.get(kind) or {}).get("jaccard") for r in coarse_rows],
            }
            for kind, label in KIND_LABELS.items()
        ],
    }
    return render(request, "judges/alignment.html", context)


def _case_ideas(run_ids: list[int]) -> list[Idea]:
    """Ideas where the personalized and aggregate judges disagreed most (Appendix F candidates)."""
    finals = selectors.finals_frame(run_ids=run_ids)
    if finals.empty:
        return []
    top = finals[finals["k"] == finals.groupby("kind")["k"].transform("max")]
    wide = top.pivot_table(
        index=["idea_id", "reviewer_id", "dimension"], columns="kind", values="pred"
    )
    if "personalized" not in wide or "aggregate" not in wide:
        return []
    gap = (wide["personalized"] - wide["aggregate"]).abs().dropna().sort_values(ascending=False)
    ids = list(dict.fromkeys(int(i) for i, _, _ in gap.index[:30]))[:6]
    ideas = {i.id: i for i in Idea.objects.filter(id__in=ids)}
    return [ideas[i] for i in ids if i in ideas]


@role_required("manager", "admin")
def alignment_csv(request: HttpRequest, table: str) -> HttpResponse:
    domain = _domain_from(request)
    run_ids = selectors.report_run_ids(source=request.GET.get("source") or "auto", domain=domain)
    report = selectors.alignment_report(run_ids=run_ids, with_reasoning=(table == "reasoning"))
    if table == "curve":
        return _csv_response(
            "judge-alignment.csv",
            ["dimension", "configuration", "k", "alpha", "n", "discard_rate"],
            [
                [r["dimension"], r["kind"], r["k"], r["alpha"], r["n"], r["discard_rate"]]
                for r in report["curve"]
            ],
        )
    if table == "coarse":
        return _csv_response(
            "judge-coarse-alignment.csv",
            [
                "dimension",
                "configuration",
                "k",
                "above_median_jaccard",
                "top50_overlap",
                "n_reviewers",
            ],
            [
                [
                    r["dimension"],
                    r["kind"],
                    r["k"],
                    r["jaccard"],
                    r["top50_overlap"],
                    r["n_reviewers"],
                ]
                for r in report["coarse"]
            ],
        )
    if table == "discard":
        return _csv_response(
            "judge-discard-rates.csv",
            ["domain", "dimension", "predictions", "scored", "discarded", "failed", "discard_rate"],
            [
                [
                    r["domain"],
                    r["dimension"],
                    r["n_predictions"],
                    r["n_scored"],
                    r["n_discarded"],
                    r["n_failed"],
                    r["discard_rate"],
                ]
                for r in report["discard"]
            ],
        )
    if table == "reasoning":
        return _csv_response(
            "judge-reasoning.csv",
            [
                "configuration",
                "k",
                "reviewer_a",
                "reviewer_b",
                "agreement",
                "reason_similarity",
                "n_items",
                "pearson_r",
            ],
            [
                [
                    r["kind"],
                    r["k"],
                    p["reviewer_a"],
                    p["reviewer_b"],
                    p["agreement"],
                    p["similarity"],
                    p["n_items"],
                    r["pearson_r"],
                ]
                for r in report["reasoning"]
                for p in r["points"]
            ],
        )
    raise Http404("Unknown table")


# --------------------------------------------------------------------------- runs


def _runs_context(request: HttpRequest, *, limit: int = 30) -> dict[str, Any]:
    runs = list(selectors.judge_runs(limit=limit))
    return {
        "runs": runs,
        "is_admin": request.user.is_admin,
        "any_active": any(r.is_active for r in runs),
        "limit": limit,
    }


@role_required("manager", "admin")
def runs(request: HttpRequest) -> HttpResponse:
    form = None
    if request.method == "POST":
        if not request.user.is_admin:
            raise PermissionDenied("Only admins start judge studies.")
        form = StudyForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                run, created = services.judge_study_start(
                    by=request.user,
                    domain=data["domain"],
                    dimensions=data["dimensions"],
                    configs=list(data["configs"]),
                    shots=data["shots"],
                    seeds=data["seeds"],
                    backend=data["backend"],
                    min_history=data["min_history"],
                )
            except ApplicationError as exc:
                form.add_error(None, str(exc))
            else:
                if created:
                    messages.success(request, f"Study #{run.id} queued.")
                else:
                    messages.warning(
                        request,
                        f"The same study (#{run.id}) is already {run.status}; not started twice.",
                    )
                return redirect("judges:runs")
    elif request.user.is_admin:
        form = StudyForm()
    context = {**_runs_context(request), "form": form, "local_label": LOCAL_LABEL}
    return render(request, "judges/runs.html", context)


@role_required("manager", "admin")
def runs_table(request: HttpRequest) -> HttpResponse:
    limit = 8 if request.GET.get("compact") else 30
    return render(
        request,
        "judges/_runs.html",
        {**_runs_context(request, limit=limit), "compact": bool(request.GET.get("compact"))},
    )


@require_POST
@role_required("admin")
def run_cancel(request: HttpRequest, run_id: int) -> HttpResponse:
    try:
        run = services.judge_run_cancel(run=services.judge_run_get(run_id=run_id), by=request.user)
    except ApplicationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Run #{run.id} cancelled.")
    if request.htmx:
        return render(request, "judges/_runs.html", _runs_context(request))
    return redirect(request.POST.get("next") or reverse("judges:runs"))


@role_required("manager", "admin")
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = (
        JudgeRun.objects.select_related("domain", "reviewer", "requested_by")
        .filter(id=run_id)
        .first()
    )
    if run is None:
        raise Http404("No such run")
    report = (
        selectors.alignment_report(run_ids=[run.id], with_reasoning=False)
        if run.status == "done"
        else None
    )
    return render(
        request,
        "judges/run_detail.html",
        {
            "run": run,
            "history": run.history.select_related("changed_by"),
            "configs": run.configs.all(),
            "table": selectors.alignment_table(report) if report else [],
            "is_admin": request.user.is_admin,
            "kind_labels": KIND_LABELS,
        },
    )


# --------------------------------------------------------------------------- case, predictions


@role_required("manager", "admin")
def case(request: HttpRequest, idea_id: int) -> HttpResponse:
    idea = Idea.objects.select_related("patent", "patent__domain").filter(id=idea_id).first()
    if idea is None:
        raise Http404("No such idea")
    finals = list(selectors.case_finals(idea_id=idea.id))
    # Keep, per (dimension, reviewer, kind), the final from the newest run at the largest k.
    best: dict[tuple[int, int, str], Any] = {}
    for f in finals:
        key = (f.dimension_id, f.reviewer_id, f.kind)
        cur = best.get(key)
        if cur is None or (f.k, f.run_id) > (cur.k, cur.run_id):
            best[key] = f
    truth = {
        (r.reviewer_id, r.dimension_id): r
        for r in Rating.objects.filter(idea=idea).select_related("dimension")
    }
    rows: dict[tuple[int, int], dict[str, Any]] = {}
    for (dim_id, reviewer_id, kind), f in best.items():
        row = rows.setdefault(
            (dim_id, reviewer_id),
            {
                "dimension": f.dimension,
                "reviewer": f.reviewer,
                "truth": truth.get((reviewer_id, dim_id)),
            },
        )
        row[kind] = f
    ordered = sorted(rows.values(), key=lambda r: (r["dimension"].position, r["reviewer"].username))
    dimensions = list(dict.fromkeys(r["dimension"] for r in ordered))
    return render(
        request,
        "judges/case.html",
        {"idea": idea, "rows": ordered, "dimensions": dimensions, **_local_note()},
    )


def _local_note() -> dict[str, Any]:
    uses_local = JudgeConfig.objects.filter(backend=JudgeConfig.Backend.LOCAL).exists()
    return {"uses_local": uses_local, "local_label": LOCAL_LABEL}


@role_required("manager", "admin")
def predictions(request: HttpRequest) -> HttpResponse:
    reviewers = [
        (u.username, u.display_name)
        for u in User.objects.filter(role=User.Role.REVIEWER).order_by("username")
    ]
    form = PredictionFilterForm(request.GET or None, reviewers=reviewers)
    form.is_valid()
    data = getattr(form, "cleaned_data", {}) or {}
    reviewer = (
        User.objects.filter(username=data.get("reviewer")).first() if data.get("reviewer") else None
    )
    finals = list(
        selectors.unrated_predictions(
            reviewer_id=reviewer.id if reviewer else None,
            domain=data.get("domain"),
            dimension=data.get("dimension") or None,
        )
    )
    medians = _reviewer_medians({(f.reviewer_id, f.dimension_id) for f in finals})
    rows = []
    for f in finals:
        median = medians.get((f.reviewer_id, f.dimension_id))
        # Same cut as the top-50% overlap metric: at or above the reviewer's own median.
        shortlisted = f.score is not None and median is not None and f.score >= median
        rows.append({"f": f, "median": median, "shortlisted": shortlisted})
    if request.GET.get("format") == "csv":
        return _csv_response(
            "judge-predictions.csv",
            [
                "reviewer",
                "domain",
                "dimension",
                "idea",
                "idea_title",
                "predicted_score",
                "confidence",
                "reviewer_median",
                "shortlisted",
                "kept_seeds",
                "run",
            ],
            [
                [
                    r["f"].reviewer.username,
                    r["f"].idea.patent.domain_id and r["f"].run.domain.key,
                    r["f"].dimension.key,
                    r["f"].idea.external_id,
                    r["f"].idea.title,
                    r["f"].score,
                    r["f"].confidence,
                    r["median"],
                    r["shortlisted"],
                    r["f"].kept,
                    r["f"].run_id,
                ]
                for r in rows
            ],
        )
    shown = rows[:500]
    return render(
        request,
        "judges/predictions.html",
        {
            "form": form,
            "rows": shown,
            "n_rows": len(rows),
            "n_shortlisted": sum(r["shortlisted"] for r in rows),
            "query": request.GET.urlencode(),
            **_local_note(),
            "gaps": [
                g
                for g in selectors.history_gaps(reviewer_ids=[reviewer.id] if reviewer else None)
                if g["missing"] and g["n"]
            ][:10],
        },
    )


def _reviewer_medians(keys: set[tuple[int, int]]) -> dict[tuple[int, int], float]:
    if not keys:
        return {}
    scores: dict[tuple[int, int], list[int]] = defaultdict(list)
    for reviewer_id, dimension_id, score in Rating.objects.filter(
        status=Rating.Status.SCORED,
        reviewer_id__in={k[0] for k in keys},
        dimension_id__in={k[1] for k in keys},
    ).values_list("reviewer_id", "dimension_id", "score"):
        scores[(reviewer_id, dimension_id)].append(score)
    return {k: statistics.median(v) for k, v in scores.items() if v}


# --------------------------------------------------------------------------- reviewer's own page


@role_required("reviewer")
def me(request: HttpRequest) -> HttpResponse:
    """The reviewer's own judge only: nothing here is computed from other reviewers' judges."""
    user = request.user
    run_ids = selectors.latest_done_runs(
        purpose=JudgeRun.Purpose.LOO_EVALUATION, reviewer_id=user.id
    )
    report = selectors.alignment_report(run_ids=run_ids, with_reasoning=False)
    names = selectors.dimension_names()
    gaps = selectors.history_gaps(reviewer_ids=[user.id])
    pending = JudgeRun.objects.filter(reviewer=user, status__in=JudgeRun.ACTIVE).count()
    return render(
        request,
        "judges/me.html",
        {
            "charts": _chart_series(report, names),
            "gaps": [g for g in gaps if g["missing"]],
            "ready": [g for g in gaps if not g["missing"]],
            "pending": pending,
            "report": report,
            "kinds": [(k, KIND_LABELS[k]) for k in KIND_LABELS],
            "coarse_rows": _coarse_rows(report, names),
        },
    )


def can_see_all(user: Any) -> bool:
    return has_role(user, ("manager", "admin"))
