"""The alignment report computed from finals and truth (engine.alignment): its sources, run ids,
per-reviewer sections and table rows."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from django.conf import settings
from django.core.cache import cache

from apps.catalog.models import Domain, Idea
from apps.core import untrusted
from apps.core.display import when
from apps.judges.backends import embed_texts
from apps.judges.engine import alignment
from apps.judges.engine.embeddings import embed_texts_local_sparse
from apps.judges.models import (
    JudgeRun,
)
from apps.judges.selectors.common import _all_scales, model_label
from apps.judges.selectors.predictions import (
    coverage_counts,
    final_reasons,
    finals_frame,
    prediction_counts,
    truth_frame,
)
from apps.judges.selectors.runs import latest_done_runs


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
    run_id = untrusted.parse_int(source[4:], low=1) if source.startswith("run-") else None
    if run_id is not None:
        return list(
            JudgeRun.objects.filter(id=run_id, status=JudgeRun.Status.DONE).values_list(
                "id", flat=True
            )
        )
    return latest_done_runs(
        purpose=JudgeRun.Purpose.LOO_EVALUATION, domain=domain, reviewer_id=reviewer_id
    )


def _models_by_kind(counts: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    if counts.empty:
        return {}
    totals = counts.groupby(["kind", "backend", "model", "response_mode"], sort=True)["n"].sum()
    out: dict[str, list[dict[str, Any]]] = {}
    for (kind, backend, model, mode), n in totals.items():
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


def _coverage_curves(counts: pd.DataFrame) -> list[dict[str, Any]]:
    """Per configuration (kind, at its largest k): coverage and accuracy as the threshold moves.
    Failed calls stay in the denominator: predictions the threshold cannot keep."""
    out = []
    for kind, g in counts.groupby("kind", sort=True):
        g = g[g["k"] == g["k"].max()]
        out.append(
            {
                "kind": str(kind),
                "k": int(g["k"].max()),
                "n": int(g["n"].sum()),
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
    *,
    run_ids: list[int],
    with_reasoning: bool = True,
    by_reviewer: bool = False,
    previous_per_reviewer: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Everything the alignment dashboard, its API and the study command show, JSON-ready.

    Heavy: called by the snapshot task (services.alignment) and the study command, never by a
    request. With by_reviewer, `per_reviewer` maps "r<id>" to that reviewer's own curve, coarse
    rows and verdicts ("My judge"); a reviewer whose section in `previous_per_reviewer` (the
    scope's last snapshot) was computed from the same rows gets that section back, not a new one.
    """
    finals = finals_frame(run_ids=run_ids)
    n_finals = len(finals)
    names = (
        finals.drop_duplicates("reviewer_id").set_index("reviewer_id")["reviewer"].to_dict()
        if not finals.empty
        else {}
    )
    case_ids = alignment.case_idea_ids(finals)
    scored = finals.dropna(subset=["truth"]) if not finals.empty else finals
    # The rest reads the scored rows only: at a million finals each copy is hundreds of MB.
    del finals
    scales = _all_scales()
    counts = prediction_counts(run_ids=run_ids)
    truth = (
        truth_frame(
            reviewer_ids=scored["reviewer_id"].unique(), idea_ids=scored["idea_id"].unique()
        )
        if not scored.empty
        else pd.DataFrame(columns=["reviewer_id", "reviewer", "idea_id", "dimension", "score"])
    )
    # A reviewer's verdicts, like their section, depend on their rows alone: those whose rows
    # hash as in the last snapshot keep its section and verdicts (recomputed for every
    # reviewer, the verdicts' bootstraps were a quarter of the overall scope at 100x the demo).
    hashes = _section_hashes(scored, scales) if by_reviewer else {}
    kept = _kept_sections(hashes, previous_per_reviewer or {})
    verdicts = _verdicts(scored, scales=scales, kept=kept)
    for v in verdicts:
        v["reviewer"] = names.get(v["reviewer_id"], str(v["reviewer_id"]))
    ideas = {i.id: i for i in Idea.objects.filter(id__in=case_ids)}
    report: dict[str, Any] = {
        "run_ids": run_ids,
        "n_finals": int(n_finals),
        "n_predictions": int(counts["n"].sum()),
        "curve": alignment.alignment_curve(scored, scales=scales),
        "coarse": alignment.coarse_alignment(scored),
        "discard": alignment.discard_rates(counts),
        "coverage_accuracy": _coverage_curves(coverage_counts(run_ids=run_ids)),
        "models": _models_by_kind(counts),
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
            scored, scales=scales, verdicts=verdicts, names=names, hashes=hashes, kept=kept
        )
    if with_reasoning and not scored.empty:
        reasoned = scored.loc[alignment.reasoned_rows(scored), _REASONED_COLUMNS]
        domain_of_idea = scored.drop_duplicates("idea_id").set_index("idea_id")["domain"]
        # The reasons and their vectors are the peak: not beside every final's row as well.
        del scored

        def reasons(kind: str, final_ids: Any) -> list[str]:
            return final_reasons(run_ids=run_ids, final_ids=final_ids, kind=kind)

        try:
            report["reasoning"] = alignment.reasoning_structure(
                truth,
                reasoned,
                scales=scales,
                embed=_cached_embedder(embed_texts),
                reasons=reasons,
                part_of_idea=domain_of_idea,
                store=ReasoningParts(),
            )
        except Exception as exc:  # an unreachable embeddings endpoint must not break it
            report["reasoning_note"] = f"Reasoning similarity could not be computed: {exc}"
    return report


# What the reasoning structure reads of a final, and its id to fetch the reason by.
_REASONED_COLUMNS = ["reviewer_id", "idea_id", "dimension", "kind", "k", "pred", "final_id"]


def _section_hashes(scored: pd.DataFrame, scales: dict[str, tuple[int, int]]) -> dict[int, str]:
    """Each reviewer's rows_hash (what their section and verdicts are computed from)."""
    return {
        int(reviewer_id): _rows_hash(g, scales)
        for reviewer_id, g in alignment.frame_groups(scored, "reviewer_id")
    }


def _kept_sections(
    hashes: dict[int, str], previous: dict[str, dict[str, Any]]
) -> dict[int, dict[str, Any]]:
    """The last snapshot's sections still true: computed from the same rows (and by this
    SECTION_VERSION, which the digest holds)."""
    kept = {}
    for reviewer_id, rows_hash in hashes.items():
        before = previous.get(f"r{reviewer_id}")
        if before is not None and before.get("rows_hash") == rows_hash:
            kept[reviewer_id] = before
    return kept


def _verdicts(
    scored: pd.DataFrame, *, scales: dict[str, tuple[int, int]], kept: dict[int, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every reviewer's verdicts, in reviewer_verdicts' order: a kept section's as stored
    (without the reviewer's name, set again by the caller), the others computed."""
    if scored.empty:
        return []
    fresh = scored[~scored["reviewer_id"].isin(list(kept))] if kept else scored
    verdicts = alignment.reviewer_verdicts(fresh, scales=scales) if not fresh.empty else []
    for section in kept.values():
        verdicts += [
            {k: v for k, v in verdict.items() if k != "reviewer"} for verdict in section["verdicts"]
        ]
    return sorted(verdicts, key=lambda v: (v["reviewer_id"], v["dimension"]))


def _per_reviewer(
    scored: pd.DataFrame,
    *,
    scales: dict[str, tuple[int, int]],
    verdicts: list[dict[str, Any]],
    names: dict[int, str],
    hashes: dict[int, str],
    kept: dict[int, dict[str, Any]],
) -> dict[str, dict[str, Any]]:
    """Each reviewer's section. A section is a function of the reviewer's rows alone (its
    bootstraps are seeded), so one whose rows hash as before is taken from the last snapshot
    (`kept`): after a burst that touched ten reviewers of a thousand, ten sections are
    computed, where each costs a fraction of a second (bench/bench_scale.py)."""
    out: dict[str, dict[str, Any]] = {}
    if scored.empty:
        return out
    mine: dict[int, list[dict[str, Any]]] = {}
    for v in verdicts:
        mine.setdefault(v["reviewer_id"], []).append(v)
    for reviewer_id, g in alignment.frame_groups(scored, "reviewer_id"):
        rid = int(reviewer_id)
        key, name = f"r{rid}", names.get(reviewer_id, str(reviewer_id))
        if rid in kept:
            out[key] = {**kept[rid], "reviewer": name, "verdicts": mine.get(rid, [])}
            continue
        out[key] = {
            "reviewer": name,
            "curve": alignment.alignment_curve(g, scales=scales),
            "coarse": alignment.coarse_alignment(g),
            "verdicts": mine.get(rid, []),
            "rows_hash": hashes[rid],
        }
    return out


# Part of every section's digest: change it when a section's computation changes, so an upgrade
# recomputes every section instead of keeping the old ones.
# 2: the verdicts are kept with the sections; 3: the lift's bootstrap draws kinds of target.
SECTION_VERSION = 3


def _rows_hash(frame: pd.DataFrame, scales: dict[str, tuple[int, int]]) -> str:
    """A digest of what a reviewer's section is computed from: the rows (values, columns, order),
    the rubric scales and SECTION_VERSION."""
    frame = frame.drop(columns=["final_id"])  # which stored rows, not what they say
    header = f"{SECTION_VERSION}\0{sorted(scales.items())}\0" + "\0".join(map(str, frame.columns))
    digest = hashlib.sha256(header.encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return digest.hexdigest()


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


class ReasoningParts:
    """The reasoning structure's parts (one per domain: engine.alignment.reasoning) kept in the
    cache for a day by their digest, so the overall scope takes what each domain's scope
    computed from the same rows, on any worker. Under the embedding settings' name: another
    model's similarities are other numbers. A part of more than MAX_POINTS points (a domain of
    thousands of reviewers) is not kept: the cache holds small values."""

    MAX_POINTS = 20_000
    TIMEOUT = 24 * 3600

    def __init__(self) -> None:
        embedding = hashlib.sha256(
            f"{getattr(settings, 'EMBEDDINGS_BASE_URL', '')}\0"
            f"{getattr(settings, 'EMBEDDINGS_MODEL', '')}".encode()
        ).hexdigest()[:16]
        self.prefix = f"{settings.JUDGE_CACHE_PREFIX}:reasoning-part:{embedding}:"

    def get_many(self, digests: Sequence[str]) -> dict[str, dict[str, Any]]:
        found = cache.get_many([self.prefix + d for d in digests])
        return {key.removeprefix(self.prefix): part for key, part in found.items()}

    def set_many(self, parts: dict[str, dict[str, Any]]) -> None:
        small = {
            self.prefix + digest: part
            for digest, part in parts.items()
            if sum(len(k["points"]) for k in part["kinds"].values()) <= self.MAX_POINTS
        }
        cache.set_many(small, timeout=self.TIMEOUT)


def _cached_embedder(embed: Any) -> Any:
    """Remote embeddings cost money and time: keep each text's vector in the cache for a day,
    so reloading the dashboard embeds only reasons it has not seen. The local method is cheap
    and its vectors are large, so it is not cached, and stays sparse."""
    if not getattr(settings, "EMBEDDINGS_BASE_URL", ""):
        return embed_texts_local_sparse

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
