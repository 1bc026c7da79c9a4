"""Reads for findings: the rationale frames, the stored snapshots, and the Decide flag."""

from __future__ import annotations

from typing import Any

import pandas as pd
from django.conf import settings
from django.db.models.fields.json import KeyTransform

from apps.accounts.models import User
from apps.catalog.models import Idea
from apps.core.models import SNAPSHOT_NEWEST_FIRST
from apps.findings.analysis.compute import COLUMNS
from apps.findings.analysis.dedup import DEFAULT_THRESHOLD
from apps.findings.models import FindingSlice, FindingSnapshot, Source, scope_key
from apps.judges.models import JudgeConfig, JudgePrediction, JudgeRun
from apps.judges.selectors import latest_done_runs
from apps.screening.models import Rating

# Decide's flag (`unsaturated_idea_ids`): an idea is far from saturated when its reviewers have
# raised less than this share of the findings Chao2 estimates it has.
UNSATURATED_COVERAGE = 0.6


def default_threshold() -> float:
    return float(getattr(settings, "FINDINGS_SIMILARITY_THRESHOLD", DEFAULT_THRESHOLD))


def rationale_frame(*, domain: str | None = None, idea_id: int | None = None) -> pd.DataFrame:
    """Reviewers' non-empty rationales, one row each; `member` is the reviewer id."""
    qs = Rating.objects.exclude(rationale="")
    if domain is not None:
        qs = qs.filter(idea__patent__domain__key=domain)
    if idea_id is not None:
        qs = qs.filter(idea_id=idea_id)
    rows = qs.order_by("id").values_list(
        "id", "idea_id", "idea__patent__domain__key", "dimension__key", "reviewer_id", "rationale"
    )
    frame = pd.DataFrame(list(rows), columns=COLUMNS)
    frame["member"] = frame["member"].astype(str)
    return frame


def judge_reason_frame(*, domain: str | None = None) -> pd.DataFrame:
    """LLM judges' reasons from the newest finished run of every scope, one row per prediction;
    `member` is the judge configuration ("personalized k=8"), the judges' sampling unit.

    The local baseline's reasons are left out: they describe its arithmetic ("7 of 9 examples
    scored 2", "3 other reviewers scored this idea ...") rather than anything about the idea,
    and a demo's studies write tens of thousands of them."""
    run_ids = latest_done_runs(purpose=JudgeRun.Purpose.PREDICTION) + latest_done_runs(
        purpose=JudgeRun.Purpose.LOO_EVALUATION
    )
    qs = (
        JudgePrediction.objects.filter(run_id__in=run_ids)
        .exclude(reason="")
        .exclude(backend=JudgeConfig.Backend.LOCAL)
    )
    if domain is not None:
        qs = qs.filter(idea__patent__domain__key=domain)
    rows = qs.order_by("id").values_list(
        "id", "idea_id", "idea__patent__domain__key", "dimension__key", "kind", "k", "reason"
    )
    frame = pd.DataFrame(
        [(i, idea, d, dim, f"{kind} k={k}", text) for i, idea, d, dim, kind, k, text in rows],
        columns=COLUMNS,
    )
    return frame


def snapshot_latest(*, threshold: float | None = None) -> FindingSnapshot | None:
    """The newest finished snapshot at a threshold (the default setting when None)."""
    scope = scope_key(threshold=default_threshold() if threshold is None else threshold)
    return (
        FindingSnapshot.objects.filter(scope=scope, status=FindingSnapshot.Status.DONE)
        .defer("result")  # every domain's summary: read one at a time (domain_summary)
        .order_by(*SNAPSHOT_NEWEST_FIRST)
        .first()
    )


def snapshot_in_progress(*, threshold: float | None = None) -> FindingSnapshot | None:
    scope = scope_key(threshold=default_threshold() if threshold is None else threshold)
    return (
        FindingSnapshot.objects.filter(
            scope=scope,
            status__in=[FindingSnapshot.Status.QUEUED, FindingSnapshot.Status.RUNNING],
        )
        .defer("result")
        .order_by("-created_at", "-id")
        .first()
    )


def domain_summary(
    snapshot: FindingSnapshot, *, domain: str, source: str = Source.REVIEWERS
) -> dict[str, Any] | None:
    """One domain's part of the snapshot's summary, picked out by the database: the summary
    holds every domain of both sources, and parsing all of it was most of the findings page
    at a million ratings (98 domains)."""
    part = KeyTransform(domain, KeyTransform("domains", KeyTransform(source, "result")))
    return (
        FindingSnapshot.objects.filter(id=snapshot.id)
        .annotate(part=part)
        .values_list("part", flat=True)
        .first()
    )


def idea_sections(
    snapshot: FindingSnapshot, *, domain: str, source: str = Source.REVIEWERS
) -> dict[str, Any]:
    row = FindingSlice.objects.filter(snapshot=snapshot, source=source, domain=domain).first()
    return row.ideas if row is not None else {}


def idea_section(
    snapshot: FindingSnapshot, *, idea: Idea, source: str = Source.REVIEWERS
) -> dict[str, Any] | None:
    """One idea's findings and estimates; None when it has no rationale in the snapshot."""
    ideas = idea_sections(snapshot, domain=idea.patent.domain.key, source=source)
    return ideas.get(str(idea.pk))


def blind_section(section: dict[str, Any] | None, *, viewer: User) -> dict[str, Any] | None:
    """What `viewer` may see of an idea's findings (the one home of the blindness rule).

    Managers and admins see everything. A reviewer sees only the findings they raised, only
    their own units' text, and none of the figures that count other reviewers' rationales
    (how many raised a finding, totals, estimates): blind review, as for scores.
    """
    if section is None:
        return None
    if viewer.can_read_all_ratings:
        return section
    me = str(viewer.pk)
    own = []
    for finding in section.get("findings", []):
        if me in finding["members"]:
            own.append(
                {
                    "id": finding["id"],
                    "name": next(u["text"] for u in finding["units"] if u["member"] == me),
                    "members": [me],
                    "units": [u for u in finding["units"] if u["member"] == me],
                }
            )
    return {"findings": own, "n_findings": len(own), "blind": True}


def unsaturated_idea_ids(*, domain: str, threshold: float | None = None) -> set[int]:
    """Ideas of `domain` whose findings are far from saturated, for Decide to flag.

    The rule: at least two reviewers wrote rationales on the idea (below that nothing beyond
    what was seen can be estimated) and the estimated sample coverage is below
    UNSATURATED_COVERAGE (0.6), i.e. findings not yet raised are expected to make up more than
    40 % of what the next reviewer would raise. Reads the newest finished snapshot; empty when
    there is none.
    """
    snapshot = snapshot_latest(threshold=threshold)
    if snapshot is None:
        return set()
    flagged = set()
    for idea_id, section in idea_sections(snapshot, domain=domain).items():
        cov = section.get("coverage")
        if section.get("n_reviewers", 0) >= 2 and cov is not None and cov < UNSATURATED_COVERAGE:
            flagged.add(int(idea_id))
    return flagged
