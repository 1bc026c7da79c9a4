"""Reads for the judges: example pools, target texts, run listings and alignment frames."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, F, Q, QuerySet, Sum

from apps.accounts.models import ReviewerProfile, User
from apps.catalog.models import Domain, Idea
from apps.core.display import when
from apps.core.models import SNAPSHOT_NEWEST_FIRST
from apps.judges.backends import embed_texts
from apps.judges.engine import alignment
from apps.judges.models import (
    LOCAL_LABEL,
    AlignmentSnapshot,
    JudgeConfig,
    JudgeFinal,
    JudgePrediction,
    JudgeRun,
    JudgeShortlist,
)
from apps.screening.models import Dimension, Rating, Rubric

POOL_COLUMNS = ["rating_id", "idea_id", "patent_id", "reviewer_id", "domain", "dimension", "score"]


def rubric_for_domain(domain: Domain) -> Rubric | None:
    if domain.rubric_id:
        return domain.rubric
    return Rubric.objects.filter(is_default=True).first()


def dimensions_for_domain(domain: Domain, keys: Iterable[str] | None = None) -> list[Dimension]:
    rubric = rubric_for_domain(domain)
    if rubric is None:
        return []
    qs = rubric.dimensions.order_by("position")
    if keys is not None:
        qs = qs.filter(key__in=list(keys))
    return list(qs)


def scales_for(dimensions: Iterable[Dimension]) -> dict[str, tuple[int, int]]:
    return {d.key: (d.scale_min, d.scale_max) for d in dimensions}


def rating_pool_frame(*, domain: Domain, dimension_ids: Iterable[int]) -> pd.DataFrame:
    """Every scored rating in the domain on these dimensions: the few-shot example pool."""
    rows = (
        Rating.objects.filter(
            status=Rating.Status.SCORED,
            idea__patent__domain=domain,
            dimension_id__in=list(dimension_ids),
        )
        .values_list("id", "idea_id", "idea__patent_id", "reviewer_id", "dimension__key", "score")
        .order_by("id")
    )
    frame = pd.DataFrame(
        [(r[0], r[1], r[2], r[3], domain.key, r[4], r[5]) for r in rows], columns=POOL_COLUMNS
    )
    return frame.astype({"rating_id": int, "idea_id": int, "patent_id": int, "reviewer_id": int})


def idea_rows(idea_ids: Iterable[int]) -> dict[int, Idea]:
    return {i.id: i for i in Idea.objects.filter(id__in=set(idea_ids)).select_related("patent")}


def reviewer_history_counts(*, reviewer_id: int) -> list[Mapping[str, Any]]:
    """Scored ratings of one reviewer per (domain, dimension), in their domains."""
    return list(
        Rating.objects.filter(reviewer_id=reviewer_id, status=Rating.Status.SCORED)
        .values("idea__patent__domain_id", "dimension__key", "dimension_id")
        .annotate(n=Count("id"))
        .order_by("idea__patent__domain_id", "dimension__key")
    )


def reviewers_history_counts(*, reviewer_ids: Iterable[int]) -> list[dict[str, Any]]:
    """Scored ratings per (reviewer, domain, dimension key) for many reviewers: one aggregate
    query, rows {reviewer_id, domain_id, dimension, n}, ordered."""
    rows = (
        Rating.objects.filter(reviewer_id__in=list(reviewer_ids), status=Rating.Status.SCORED)
        .values_list("reviewer_id", "idea__patent__domain_id", "dimension__key")
        .annotate(n=Count("id"))
        .order_by("reviewer_id", "idea__patent__domain_id", "dimension__key")
    )
    return [{"reviewer_id": r, "domain_id": d, "dimension": k, "n": n} for r, d, k, n in rows]


def reviewers_profile_domain_ids(*, reviewer_ids: Iterable[int]) -> dict[int, set[int]]:
    """Reviewer id -> the domain ids of their profile (absent: no profile or no domains)."""
    out: dict[int, set[int]] = {}
    rows = ReviewerProfile.domains.through.objects.filter(
        reviewerprofile__user_id__in=list(reviewer_ids)
    ).values_list("reviewerprofile__user_id", "domain_id")
    for user_id, domain_id in rows:
        out.setdefault(user_id, set()).add(domain_id)
    return out


def reviewer_unrated_idea_ids(*, reviewer_id: int, domain: Domain) -> list[int]:
    """Ideas of the domain the reviewer never rated (no rating row at all, on any dimension)."""
    rated = Rating.objects.filter(reviewer_id=reviewer_id).values("idea_id")
    return list(
        Idea.objects.filter(patent__domain=domain)
        .exclude(id__in=rated)
        .order_by("id")
        .values_list("id", flat=True)
    )


def active_auto_configs() -> list[JudgeConfig]:
    return list(JudgeConfig.objects.filter(is_active=True, auto=True).order_by("kind", "id"))


RUN_ORIGINS = {
    # Leave-one-out evaluations and predictions start by themselves after saved ratings.
    "automatic": ~Q(purpose=JudgeRun.Purpose.STUDY),
    "studies": Q(purpose=JudgeRun.Purpose.STUDY),
}


def judge_runs(*, limit: int = 50, origin: str = "", status: str = "") -> QuerySet[JudgeRun]:
    runs = JudgeRun.objects.select_related("reviewer", "domain", "requested_by")
    if origin in RUN_ORIGINS:
        runs = runs.filter(RUN_ORIGINS[origin])
    if status:
        runs = runs.filter(status=status)
    return runs.prefetch_related("configs").order_by("-created_at", "-id")[:limit]


def study_run(*, run_id: int) -> JudgeRun | None:
    return JudgeRun.objects.filter(id=run_id, purpose=JudgeRun.Purpose.STUDY).first()


def latest_done_runs(
    *, purpose: str, domain: Domain | None = None, reviewer_id: int | None = None
) -> list[int]:
    """Ids of the newest finished run per scope (a later run supersedes earlier ones)."""
    qs = JudgeRun.objects.filter(purpose=purpose, status=JudgeRun.Status.DONE)
    if domain is not None:
        qs = qs.filter(domain=domain)
    if reviewer_id is not None:
        qs = qs.filter(reviewer_id=reviewer_id)
    newest: dict[str, int] = {}
    for run_id, scope in qs.order_by("finished_at", "id").values_list("id", "scope_key"):
        newest[scope] = run_id
    return sorted(newest.values())


def finals_frame(*, run_ids: Iterable[int], dimension: str | None = None) -> pd.DataFrame:
    """Final predictions of these runs joined with the target reviewer's own score (may be NaN)."""
    qs = JudgeFinal.objects.filter(run_id__in=list(run_ids))
    if dimension:
        qs = qs.filter(dimension__key=dimension)
    rows = list(
        qs.values_list(
            "reviewer_id",
            "reviewer__username",
            "idea_id",
            "idea__patent__domain__key",
            "dimension_id",
            "dimension__key",
            "kind",
            "k",
            "score",
            "confidence",
            "reason",
            "kept",
            "discarded",
            "failed",
            "level_score",
            "signal",
        )
    )
    columns = [
        "reviewer_id",
        "reviewer",
        "idea_id",
        "domain",
        "dimension_id",
        "dimension",
        "kind",
        "k",
        "pred",
        "confidence",
        "reason",
        "kept",
        "discarded",
        "failed",
        "base",  # the level-only baseline (engine.level)
        "signal",
    ]
    frame = pd.DataFrame(rows, columns=columns)
    if frame.empty:
        frame["truth"] = pd.Series(dtype=float)
        return frame
    truth = truth_frame(
        reviewer_ids=frame["reviewer_id"].unique(), idea_ids=frame["idea_id"].unique()
    )
    truth = truth.rename(columns={"score": "truth"})[
        ["reviewer_id", "idea_id", "dimension", "truth"]
    ]
    frame = frame.merge(truth, on=["reviewer_id", "idea_id", "dimension"], how="left")
    frame["pred"] = frame["pred"].astype(float)
    frame["base"] = frame["base"].astype(float)
    return frame


def truth_frame(
    *,
    reviewer_ids: Iterable[int] | None = None,
    idea_ids: Iterable[int] | None = None,
    domain: Domain | None = None,
) -> pd.DataFrame:
    qs = Rating.objects.filter(status=Rating.Status.SCORED)
    if reviewer_ids is not None:
        qs = qs.filter(reviewer_id__in=[int(r) for r in reviewer_ids])
    if idea_ids is not None:
        qs = qs.filter(idea_id__in=[int(i) for i in idea_ids])
    if domain is not None:
        qs = qs.filter(idea__patent__domain=domain)
    rows = qs.values_list("reviewer_id", "reviewer__username", "idea_id", "dimension__key", "score")
    frame = pd.DataFrame(
        list(rows), columns=["reviewer_id", "reviewer", "idea_id", "dimension", "score"]
    )
    frame["score"] = frame["score"].astype(float)
    return frame


def predictions_frame(*, run_ids: Iterable[int]) -> pd.DataFrame:
    """One row per seed prediction: was it scored, was it discarded (its config's threshold),
    which model and response mode produced it."""
    rows = list(
        JudgePrediction.objects.filter(run_id__in=list(run_ids)).values_list(
            "reviewer_id",
            "idea_id",
            "idea__patent__domain__key",
            "dimension__key",
            "kind",
            "k",
            "score",
            "confidence",
            "config__confidence_threshold",
            "backend",
            "model",
            "response_mode",
        )
    )
    frame = pd.DataFrame(rows, columns=PREDICTION_COLUMNS)
    if frame.empty:
        return frame.assign(scored=pd.Series(dtype=bool), discarded=pd.Series(dtype=bool))
    threshold = frame["threshold"].fillna(80)
    frame["scored"] = frame["score"].notna()
    frame["discarded"] = frame["scored"] & (frame["confidence"].fillna(-1) < threshold)
    return frame


PREDICTION_COLUMNS = [
    "reviewer_id",
    "idea_id",
    "domain",
    "dimension",
    "kind",
    "k",
    "score",
    "confidence",
    "threshold",
    "backend",
    "model",
    "response_mode",
]


def unrated_predictions(
    *, reviewer_id: int | None = None, domain: Domain | None = None, dimension: str | None = None
) -> QuerySet[JudgeFinal]:
    """Latest prediction-run finals per reviewer (ideas they have not rated)."""
    run_ids = latest_done_runs(
        purpose=JudgeRun.Purpose.PREDICTION, domain=domain, reviewer_id=reviewer_id
    )
    qs = JudgeFinal.objects.filter(run_id__in=run_ids).select_related(
        "reviewer", "idea", "idea__patent", "dimension", "run"
    )
    if dimension:
        qs = qs.filter(dimension__key=dimension)
    # Targets where no seed kept a prediction have no score; they go last, not first.
    return qs.order_by(
        "reviewer__username",
        "dimension__position",
        F("score").desc(nulls_last=True),
        F("confidence").desc(nulls_last=True),
        "idea__external_id",
    )


ALL_DIMENSIONS = "*"


def shortlist_for(
    *,
    reviewer_id: int | None = None,
    domain: Domain | None = None,
    dimension: str | None = None,
) -> QuerySet[JudgeShortlist]:
    """The stored shortlists of the latest finished prediction runs (one per reviewer, domain
    and dimension set): the top JUDGE_SHORTLIST_SIZE unread ideas per reviewer, ranked.

    The read other apps use (Decide, findings): nothing is ranked here. ``dimension``: None =
    every list, a dimension key = that dimension's list, ALL_DIMENSIONS = the list over all
    dimensions (its predicted_score is the mean position on the scales, 0 to 1). Rows come
    ordered by reviewer, domain, list, rank, with reviewer, domain, dimension and idea loaded.
    """
    run_ids = latest_done_runs(
        purpose=JudgeRun.Purpose.PREDICTION, domain=domain, reviewer_id=reviewer_id
    )
    qs = JudgeShortlist.objects.filter(run_id__in=run_ids).select_related(
        "reviewer", "domain", "dimension", "idea"
    )
    if dimension == ALL_DIMENSIONS:
        qs = qs.filter(dimension__isnull=True)
    elif dimension:
        qs = qs.filter(dimension__key=dimension)
    return qs.order_by(
        "reviewer__username",
        "domain__key",
        F("dimension__position").asc(nulls_first=True),
        "rank",
    )


def shortlisted_keys(*, run_ids: Iterable[int]) -> set[tuple[int, int, int]]:
    """(run, dimension, idea) of every per-dimension shortlist entry of these runs."""
    return set(
        JudgeShortlist.objects.filter(
            run_id__in=list(run_ids), dimension__isnull=False
        ).values_list("run_id", "dimension_id", "idea_id")
    )


def case_finals(*, idea_id: int) -> QuerySet[JudgeFinal]:
    """Every final judgement of one idea from the latest evaluation/prediction/study runs."""
    return (
        JudgeFinal.objects.filter(idea_id=idea_id, run__status=JudgeRun.Status.DONE)
        .select_related("reviewer", "dimension", "run")
        .order_by("dimension__position", "reviewer__username", "kind", "-k", "-run_id")
    )


def reviewers_with_finals() -> QuerySet[User]:
    return User.objects.filter(Q(id__in=JudgeFinal.objects.values("reviewer_id"))).order_by(
        "username"
    )


# --------------------------------------------------------------------------- reports


def report_sources(*, domain: Domain | None = None) -> list[dict[str, Any]]:
    """What the alignment dashboard can show: automatic evaluations, or one finished study."""
    sources = [
        {"value": "auto", "label": "Automatic leave-one-out evaluations (latest per reviewer)"}
    ]
    studies = JudgeRun.objects.filter(purpose=JudgeRun.Purpose.STUDY, status=JudgeRun.Status.DONE)
    if domain is not None:
        studies = studies.filter(domain=domain)
    for run in studies.select_related("domain").order_by("-finished_at")[:20]:
        sources.append(
            {
                "value": f"run-{run.id}",
                "label": f"Study #{run.id}: {run.domain.name}, {', '.join(run.dimensions)} "
                f"({when(run.finished_at)})",
            }
        )
    return sources


def report_run_ids(
    *, source: str, domain: Domain | None = None, reviewer_id: int | None = None
) -> list[int]:
    if source.startswith("run-") and source[4:].isdigit():
        return list(
            JudgeRun.objects.filter(id=int(source[4:]), status=JudgeRun.Status.DONE).values_list(
                "id", flat=True
            )
        )
    return latest_done_runs(
        purpose=JudgeRun.Purpose.LOO_EVALUATION, domain=domain, reviewer_id=reviewer_id
    )


def _all_scales() -> dict[str, tuple[int, int]]:
    scales: dict[str, tuple[int, int]] = {}
    for d in Dimension.objects.order_by("rubric_id", "position"):
        scales.setdefault(d.key, (d.scale_min, d.scale_max))
    return scales


def dimension_names() -> dict[str, str]:
    names: dict[str, str] = {}
    for d in Dimension.objects.order_by("-rubric__is_default", "position"):
        names.setdefault(d.key, d.name)
    return names


def model_label(*, backend: str, model: str, response_mode: str) -> str:
    """How pages name what produced a figure: the local judge is never mistaken for an LLM."""
    if backend == JudgeConfig.Backend.LOCAL:
        return LOCAL_LABEL
    return f"{model or 'default model'} ({response_mode or 'mode not recorded'})"


def _models_by_kind(preds: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    if preds.empty:
        return {}
    counts = (
        preds.fillna({"model": "", "response_mode": ""})
        .groupby(["kind", "backend", "model", "response_mode"], sort=True)
        .size()
    )
    out: dict[str, list[dict[str, Any]]] = {}
    for (kind, backend, model, mode), n in counts.items():
        out.setdefault(str(kind), []).append(
            {
                "backend": backend,
                "model": model,
                "response_mode": mode,
                "label": model_label(backend=backend, model=model, response_mode=mode),
                "n": int(n),
            }
        )
    return out


def _coverage_curves(preds: pd.DataFrame, truth: pd.DataFrame) -> list[dict[str, Any]]:
    """Per configuration (kind, at its largest k): coverage and accuracy as the threshold moves."""
    if preds.empty or truth.empty:
        return []
    t = truth.rename(columns={"score": "truth"})[["reviewer_id", "idea_id", "dimension", "truth"]]
    joined = preds.merge(t, on=["reviewer_id", "idea_id", "dimension"], how="inner")
    out = []
    for kind, g in joined.groupby("kind", sort=False):
        g = g[g["k"] == g["k"].max()]
        g = g.assign(correct=(g["score"].astype(float) == g["truth"]).to_numpy())
        # Failed calls stay in the denominator: they are predictions the threshold cannot keep.
        g.loc[g["score"].isna(), "confidence"] = np.nan
        out.append(
            {
                "kind": str(kind),
                "k": int(g["k"].max()),
                "n": int(len(g)),
                "points": alignment.coverage_accuracy(g),
                "thresholds": sorted({int(x) for x in g["threshold"].dropna()}),
            }
        )
    out.sort(
        key=lambda r: (
            alignment.KIND_ORDER.index(r["kind"]) if r["kind"] in alignment.KIND_ORDER else 9
        )
    )
    return out


def alignment_report(
    *, run_ids: list[int], with_reasoning: bool = True, by_reviewer: bool = False
) -> dict[str, Any]:
    """Everything the alignment dashboard, its API and the study command show, JSON-ready.

    Heavy: called by the snapshot task (services.alignment) and the study command, never by a
    request. With by_reviewer, `per_reviewer` maps "r<id>" to that reviewer's own curve, coarse
    rows and verdicts ("My judge").
    """
    finals = finals_frame(run_ids=run_ids)
    scales = _all_scales()
    scored = finals.dropna(subset=["truth"]) if not finals.empty else finals
    preds = predictions_frame(run_ids=run_ids)
    truth = (
        truth_frame(
            reviewer_ids=scored["reviewer_id"].unique(), idea_ids=scored["idea_id"].unique()
        )
        if not scored.empty
        else pd.DataFrame(columns=["reviewer_id", "reviewer", "idea_id", "dimension", "score"])
    )
    names = (
        finals.drop_duplicates("reviewer_id").set_index("reviewer_id")["reviewer"].to_dict()
        if not finals.empty
        else {}
    )
    verdicts = alignment.reviewer_verdicts(scored, scales=scales) if not scored.empty else []
    for v in verdicts:
        v["reviewer"] = names.get(v["reviewer_id"], str(v["reviewer_id"]))
    case_ids = alignment.case_idea_ids(finals)
    ideas = {i.id: i for i in Idea.objects.filter(id__in=case_ids)}
    report: dict[str, Any] = {
        "run_ids": run_ids,
        "n_finals": int(len(finals)),
        "n_predictions": int(len(preds)),
        "curve": alignment.alignment_curve(scored, scales=scales),
        "coarse": alignment.coarse_alignment(scored),
        "discard": alignment.discard_rates(preds),
        "coverage_accuracy": _coverage_curves(preds, truth),
        "models": _models_by_kind(preds),
        "verdicts": verdicts,
        "case_ideas": [
            {"id": i, "title": ideas[i].title, "external_id": ideas[i].external_id}
            for i in case_ids
            if i in ideas
        ],
        "reasoning": [],
        "reasoning_note": "",
    }
    if by_reviewer:
        report["per_reviewer"] = _per_reviewer(
            scored, scales=scales, verdicts=verdicts, names=names
        )
    if with_reasoning and not scored.empty:
        try:
            report["reasoning"] = alignment.reasoning_structure(
                truth, scored, scales=scales, embed=_cached_embedder(embed_texts)
            )
        except Exception as exc:  # an unreachable embeddings endpoint must not break it
            report["reasoning_note"] = f"Reasoning similarity could not be computed: {exc}"
    return report


def _per_reviewer(
    scored: pd.DataFrame,
    *,
    scales: dict[str, tuple[int, int]],
    verdicts: list[dict[str, Any]],
    names: dict[int, str],
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if scored.empty:
        return out
    for reviewer_id, g in scored.groupby("reviewer_id", sort=True):
        out[f"r{int(reviewer_id)}"] = {
            "reviewer": names.get(reviewer_id, str(reviewer_id)),
            "curve": alignment.alignment_curve(g, scales=scales),
            "coarse": alignment.coarse_alignment(g),
            "verdicts": [v for v in verdicts if v["reviewer_id"] == int(reviewer_id)],
        }
    return out


def alignment_table(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per (configuration, k, dimension): alpha, n and discard rate (the study's table)."""
    return [
        {
            "config": r["kind"],
            "k": r["k"],
            "dimension": r["dimension"],
            "alpha": r["alpha"],
            "per_reviewer_alpha": r.get("within_alpha"),
            "level_only_alpha": r.get("baseline_alpha"),
            "lift": r.get("lift"),
            "adds_nothing": r.get("adds_nothing"),
            "n": r["n"],
            "coverage": r.get("coverage"),
            "discard_rate": r["discard_rate"],
        }
        for r in report["curve"]
    ]


def history_gaps(*, reviewer_ids: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """Per reviewer, domain of their profile and dimension: ratings still needed for a judge."""
    configs = active_auto_configs() or list(JudgeConfig.objects.filter(is_active=True))
    min_history = min((c.min_history for c in configs), default=10)
    users = (
        User.objects.filter(role=User.Role.REVIEWER)
        .select_related("reviewer_profile")
        .prefetch_related("reviewer_profile__domains__rubric")
    )
    if reviewer_ids is not None:
        users = users.filter(id__in=list(reviewer_ids))
    counts: dict[tuple[int, int, str], int] = {}
    rows = (
        Rating.objects.filter(status=Rating.Status.SCORED, reviewer__in=users)
        .values_list("reviewer_id", "idea__patent__domain_id", "dimension__key")
        .annotate(n=Count("id"))
    )
    for reviewer_id, domain_id, dim, n in rows:
        counts[(reviewer_id, domain_id, dim)] = n
    out = []
    dims_of: dict[int, list[Dimension]] = {}
    for user in users.order_by("username"):
        profile = getattr(user, "reviewer_profile", None)
        if profile is None:
            continue
        for domain in profile.domains.all():
            if domain.id not in dims_of:
                dims_of[domain.id] = dimensions_for_domain(domain)
            for dim in dims_of[domain.id]:
                n = counts.get((user.id, domain.id, dim.key), 0)
                out.append(
                    {
                        "reviewer_id": user.id,
                        "reviewer": user.display_name,
                        "domain": domain.name,
                        "domain_key": domain.key,
                        "dimension": dim.key,
                        "dimension_name": dim.name,
                        "n": n,
                        "min_history": min_history,
                        "missing": max(0, min_history - n),
                    }
                )
    return out


def _cached_embedder(embed: Any) -> Any:
    """Remote embeddings cost money and time: keep each text's vector in the cache for a day,
    so reloading the dashboard embeds only reasons it has not seen. The local method is cheap
    and its vectors are large, so it is not cached."""
    if not getattr(settings, "EMBEDDINGS_BASE_URL", ""):
        return embed

    model = getattr(settings, "EMBEDDINGS_MODEL", "")

    def cached(texts: list[str]) -> Any:
        keys = ["judge-emb:" + hashlib.sha256(f"{model}\0{t}".encode()).hexdigest() for t in texts]
        found = cache.get_many(keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            vectors = embed([texts[i] for i in missing])
            fresh = {keys[i]: np.asarray(vectors[n]) for n, i in enumerate(missing)}
            cache.set_many(fresh, timeout=24 * 3600)
            found.update(fresh)
        return np.vstack([found[k] for k in keys])

    return cached


# --------------------------------------------------------------------------- snapshots


def domain_by_key(key: str | None) -> Domain | None:
    return Domain.objects.filter(key=key).first() if key else None


def alignment_snapshot_latest(*, scope: str, with_points: bool = False) -> AlignmentSnapshot | None:
    """The newest computed snapshot of a scope, without its per-reviewer section and (unless
    asked) without the full reasoning points: the dashboard reads one small row."""
    deferred = ["per_reviewer"] if with_points else ["per_reviewer", "reasoning_points"]
    return (
        AlignmentSnapshot.objects.filter(scope=scope, status=AlignmentSnapshot.Status.DONE)
        .defer(*deferred)
        .order_by(*SNAPSHOT_NEWEST_FIRST)
        .first()
    )


def alignment_snapshot_pending(*, scope: str) -> AlignmentSnapshot | None:
    """A queued or running computation of the scope, if any (the page says so)."""
    return (
        AlignmentSnapshot.objects.filter(
            scope=scope,
            status__in=[AlignmentSnapshot.Status.QUEUED, AlignmentSnapshot.Status.RUNNING],
        )
        .defer("result", "per_reviewer", "reasoning_points")
        .order_by("-created_at")
        .first()
    )


def alignment_snapshot_failure(*, scope: str, after: Any = None) -> AlignmentSnapshot | None:
    qs = AlignmentSnapshot.objects.filter(scope=scope, status=AlignmentSnapshot.Status.FAILED)
    if after is not None:
        qs = qs.filter(created_at__gt=after)
    return qs.defer("result", "per_reviewer", "reasoning_points").order_by("-created_at").first()


def alignment_snapshot_is_stale(snapshot: AlignmentSnapshot) -> bool:
    """True when a run of the scope finished after the newest run the snapshot read."""
    if snapshot.scope.startswith("run-"):
        return False
    qs = JudgeRun.objects.filter(
        purpose=JudgeRun.Purpose.LOO_EVALUATION, status=JudgeRun.Status.DONE
    )
    if "|" in snapshot.scope:
        qs = qs.filter(domain__key=snapshot.scope.split("|", 1)[1])
    if snapshot.latest_run_at is not None:
        qs = qs.filter(finished_at__gt=snapshot.latest_run_at)
    return qs.exists()


def reviewer_alignment(*, reviewer_id: int) -> tuple[AlignmentSnapshot | None, dict[str, Any]]:
    """A reviewer's own section of the newest "auto" snapshot: (snapshot, section or {})."""
    key = f"r{int(reviewer_id)}"
    row = (
        AlignmentSnapshot.objects.filter(scope="auto", status=AlignmentSnapshot.Status.DONE)
        .order_by(*SNAPSHOT_NEWEST_FIRST)
        .values("id", f"per_reviewer__{key}")
        .first()
    )
    if row is None:
        return None, {}
    snapshot = AlignmentSnapshot.objects.defer("result", "per_reviewer", "reasoning_points").get(
        id=row["id"]
    )
    return snapshot, row[f"per_reviewer__{key}"] or {}


def run_alignment_rows(run: JudgeRun) -> tuple[AlignmentSnapshot | None, list[dict[str, Any]]]:
    """The stored alignment of one finished run: a study's own snapshot, or the reviewer's rows
    of the newest "auto" snapshot that read this evaluation run."""
    if run.purpose == JudgeRun.Purpose.STUDY:
        snapshot = alignment_snapshot_latest(scope=f"run-{run.id}")
        return snapshot, (snapshot.result or {}).get("curve", []) if snapshot else []
    if run.purpose != JudgeRun.Purpose.LOO_EVALUATION or run.reviewer_id is None:
        return None, []
    key = f"r{run.reviewer_id}"
    # JSON containment is not available on SQLite (the demo): test membership here instead.
    # Only the newest few snapshots are kept per scope (services.alignment.KEEP_SNAPSHOTS).
    candidates = (
        AlignmentSnapshot.objects.filter(scope="auto", status=AlignmentSnapshot.Status.DONE)
        .order_by(*SNAPSHOT_NEWEST_FIRST)
        .values_list("id", "run_ids")
    )
    found = next((sid for sid, ids in candidates if run.id in (ids or [])), None)
    if found is None:
        return None, []
    row = AlignmentSnapshot.objects.filter(id=found).values("id", f"per_reviewer__{key}").first()
    if row is None:
        return None, []
    snapshot = AlignmentSnapshot.objects.defer("result", "per_reviewer", "reasoning_points").get(
        id=row["id"]
    )
    section = row[f"per_reviewer__{key}"] or {}
    dims = set(run.dimensions or [])
    return snapshot, [r for r in section.get("curve", []) if not dims or r["dimension"] in dims]


def judge_work_progress() -> dict[str, int]:
    """Judge work across every run still to finish: one aggregate query."""
    agg = JudgeRun.objects.filter(status__in=JudgeRun.ACTIVE).aggregate(
        queued=Count("id", filter=Q(status=JudgeRun.Status.QUEUED)),
        running=Count("id", filter=Q(status=JudgeRun.Status.RUNNING)),
        done=Sum("done"),
        total=Sum("total"),
    )
    return {k: int(v or 0) for k, v in agg.items()}


def run_model_labels(*, run_ids: Iterable[int]) -> dict[tuple[int, str], list[str]]:
    """(run id, kind) -> the model and response mode labels of its predictions."""
    out: dict[tuple[int, str], list[str]] = {}
    rows = (
        JudgePrediction.objects.filter(run_id__in=list(run_ids))
        .values_list("run_id", "kind", "backend", "model", "response_mode")
        .distinct()
        .order_by("run_id", "kind", "model")
    )
    for run_id, kind, backend, model, mode in rows:
        label = model_label(backend=backend, model=model, response_mode=mode)
        labels = out.setdefault((run_id, kind), [])
        if label not in labels:
            labels.append(label)
    return out
