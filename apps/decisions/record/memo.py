"""The director's memo: one domain's decision as a self-contained document (HTML or Markdown).

One function, ``decision_memo``, builds both formats from one context (``memo_context``), so the
page's "Export memo" and ``manage.py decision_memo`` write the same document. Figures are the
board's as Decide shows them (the latest snapshot, the overall ranking by lower bound, cut at the
domain's N) and formatted by Decide's own rule (two decimals, rounded half up).

Chosen ideas are those marked "take forward"; the ideas considered but not taken are those
marked "hold" or "reject", each with its note as the reason. For each chosen idea: estimate,
interval, rank and P(top N), people's and judges' shares, per dimension every reader's score
(gates and category answers named), the idea's findings (open when its rationales are far from
saturated) and up to three representative rationales (the longest, one per reviewer).
"""

from __future__ import annotations

from typing import Any

from django.template.defaultfilters import floatformat
from django.template.loader import render_to_string
from django.utils import timezone

from apps.catalog.models import Domain
from apps.decisions import presenters as P
from apps.decisions import selectors as board_selectors
from apps.decisions.models import DecisionMark
from apps.decisions.record import selectors
from apps.findings import selectors as findings_selectors
from apps.screening.models import Dimension, Rating
from apps.screening.selectors import frame as ratings

FORMATS = ("html", "md")
RATIONALES_PER_IDEA = 3
FINDINGS_PER_IDEA = 5


def two(value: Any) -> str:
    """A figure as Decide prints it (floatformat:2)."""
    return "" if value is None else str(floatformat(value, 2))


def _reader_text(item: list[Any], categories: set[int], meaning: dict[int, str]) -> str:
    name, raw, status = item[0], item[1], item[2]
    if status == "gated":
        return f"{name}: gated (an earlier stage failed)"
    if status != "scored" or raw is None:
        return f"{name}: {status}"
    if raw in categories:
        label = meaning.get(raw) or "category"
        return f"{name}: {raw} (category answer: {label})"
    return f"{name}: {raw}"


def memo_context(*, domain: Domain) -> dict[str, Any]:
    board = selectors.domain_board(domain=domain.key)
    marks = selectors.marks_current_by_idea(domain=domain.key)
    rows = {r["idea_id"]: r for r in board.rows}
    labels = ratings.dimension_labels()
    ranked = (board.snapshot.result or {}).get("dimensions", []) if board.snapshot else []
    # In the rubric's order (the screening form's), not the snapshot's alphabetical one.
    dims = [k for k in labels if k in ranked] + [k for k in ranked if k not in labels]
    categories = {k: {int(v) for v in vs} for k, vs in ratings.rubric_categories().items()}
    meanings = {
        d.key: {int(k): str(v) for k, v in (d.levels or {}).items() if str(k).lstrip("-").isdigit()}
        for d in Dimension.objects.filter(key__in=dims)
    }
    chosen_ids = [i for i, m in marks.items() if m.mark == DecisionMark.Mark.TAKE_FORWARD]
    per_dim: dict[str, dict[int, dict[str, Any]]] = {}
    if board.snapshot is not None:
        for dim in dims:
            per_dim[dim] = {
                r["idea_id"]: r
                for r in board_selectors.snapshot_rows(
                    board.snapshot, domain=domain.key, dimension=dim
                )
                if r["idea_id"] in chosen_ids
            }
    findings: dict[str, Any] = {}
    findings_snapshot = findings_selectors.snapshot_latest()
    if findings_snapshot is not None:
        findings = findings_selectors.idea_sections(findings_snapshot, domain=domain.key)
    rationales: dict[int, list[dict[str, str]]] = {}
    for idea_id, who, dim_name, text in (
        Rating.objects.filter(idea_id__in=chosen_ids)
        .exclude(rationale="")
        .values_list("idea_id", "reviewer__username", "dimension__name", "rationale")
        .order_by("idea_id", "reviewer__username", "dimension__position")
    ):
        rationales.setdefault(idea_id, []).append(
            {"reviewer": who, "dimension": dim_name, "text": " ".join(text.split())}
        )

    def idea_block(idea_id: int) -> dict[str, Any]:
        mark = marks[idea_id]
        row = rows.get(idea_id) or {}
        pct = P.shares(row) if row else {"people_pct": None, "judge_pct": None}
        dimensions = []
        for dim in dims:
            drow = per_dim.get(dim, {}).get(idea_id)
            if drow is None:
                continue
            readers = [
                _reader_text(s, categories.get(dim, set()), meanings.get(dim, {}))
                for s in drow["scores"]
            ]
            dimensions.append(
                {
                    "name": labels.get(dim, dim),
                    "estimate": two(drow["estimate"]),
                    "low": two(drow["low"]),
                    "high": two(drow["high"]),
                    "readers": readers,
                    "n_gated": drow.get("n_gated", 0),
                    "n_category": drow.get("n_category", 0),
                }
            )
        section = findings.get(str(idea_id)) or {}
        coverage = section.get("coverage")
        is_open = (
            section.get("n_reviewers", 0) >= 2
            and coverage is not None
            and coverage < findings_selectors.UNSATURATED_COVERAGE
        )
        picked: list[dict[str, str]] = []
        seen: set[str] = set()
        for r in sorted(rationales.get(idea_id, []), key=lambda r: -len(r["text"])):
            if r["reviewer"] in seen:
                continue
            seen.add(r["reviewer"])
            picked.append(r)
            if len(picked) == RATIONALES_PER_IDEA:
                break
        return {
            "idea": mark.idea,
            "mark": mark,
            "on_board": bool(row),
            "rank": row.get("cut_rank"),
            "estimate": two(row.get("estimate")),
            "low": two(row.get("low")),
            "high": two(row.get("high")),
            "p_top_n": two(row.get("p_top_n")),
            "in_shortlist": row.get("in_shortlist"),
            "people_pct": pct["people_pct"],
            "judge_pct": pct["judge_pct"],
            "n_reviewers": row.get("n_reviewers", 0),
            "n_predicted": row.get("n_predicted", 0),
            "dimensions": dimensions,
            "findings": [f["name"] for f in section.get("findings", [])][:FINDINGS_PER_IDEA],
            "n_findings": len(section.get("findings", [])),
            "findings_coverage": None if coverage is None else round(100 * coverage),
            "findings_open": is_open,
            "rationales": picked,
        }

    def order(idea_id: int) -> tuple[int, str]:
        return (rows.get(idea_id, {}).get("cut_rank") or 10**9, marks[idea_id].idea.external_id)

    chosen = [idea_block(i) for i in sorted(chosen_ids, key=order)]
    not_taken = []
    for idea_id in sorted(
        (i for i, m in marks.items() if m.mark != DecisionMark.Mark.TAKE_FORWARD), key=order
    ):
        m, row = marks[idea_id], rows.get(idea_id) or {}
        not_taken.append(
            {
                "idea": m.idea,
                "mark": m,
                "rank": row.get("cut_rank"),
                "estimate": two(row.get("estimate")),
                "low": two(row.get("low")),
                "high": two(row.get("high")),
                "p_top_n": two(row.get("p_top_n")),
            }
        )
    unmarked_in_shortlist = [
        r for r in board.rows if r["in_shortlist"] and r["idea_id"] not in marks
    ]
    return {
        "domain": domain,
        "board": board,
        "snapshot": board.snapshot,
        "n": board.n,
        "n_ideas": len(board.rows),
        "chosen": chosen,
        "not_taken": not_taken,
        "unmarked_in_shortlist": unmarked_in_shortlist,
        "ordered_by": P.SORTS[P.DEFAULT_SORT],
        "generated_at": timezone.now(),
        "deciders": sorted(
            {m.decided_by.display_name for m in marks.values() if m.decided_by is not None}
        ),
    }


def decision_memo(*, domain: Domain, fmt: str) -> str:
    """The memo of ``domain`` as HTML (print stylesheet inside) or Markdown."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    template = "decisions/memo.html" if fmt == "html" else "decisions/memo.md"
    return render_to_string(template, memo_context(domain=domain))
