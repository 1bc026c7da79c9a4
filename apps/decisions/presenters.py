"""Shape the stored Decide rows for the page and the CSV (one function each, same rows)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from apps.decisions.flags import MODEL_FLAGS, Flag
from apps.decisions.ranking.model import ALL

PAGE_SIZE = 100
SORTS = {
    "low": "lower bound of the 90 % interval, highest first",
    "estimate": "estimate, highest first",
    "p_top": "probability of being in the shortlist (P(top N)), highest first",
}
# Defensible by default: an idea ranks high only when even its pessimistic value is high, so one
# enthusiastic reader cannot put it on top.
DEFAULT_SORT = "low"


def sort_rows(rows: list[dict[str, Any]], *, sort: str, query: str = "") -> list[dict[str, Any]]:
    """Rows matching ``query`` (title or id, any case) in the chosen order, with their rank.

    Ties go to the higher estimate, then the title, so the order is total and the CSV repeats it.
    """
    q = query.strip().lower()
    if q:
        rows = [r for r in rows if q in r["title"].lower() or q in r["idea"].lower()]
    key = sort if sort in SORTS else DEFAULT_SORT
    # The probability order is the shortlist's: P(top N) once the cut added it (ranking/cut.py).
    field = "p_top_n" if key == "p_top" and rows and "p_top_n" in rows[0] else key
    ordered = sorted(rows, key=lambda r: (-r[field], -r["estimate"], r["title"], r["idea_id"]))
    return [{**r, "rank": n} for n, r in enumerate(ordered, start=1)]


def with_flags(
    rows: list[dict[str, Any]], extra: Mapping[int, Sequence[Flag]]
) -> list[dict[str, Any]]:
    """Each row's flags as Flag objects: the model's codes, then the other apps' flags."""
    return [
        {
            **r,
            "flag_items": [MODEL_FLAGS[c] for c in r.get("flags", []) if c in MODEL_FLAGS]
            + list(extra.get(r["idea_id"], [])),
        }
        for r in rows
    ]


def score_text(item: list[Any], *, overall: bool) -> str:
    """One reader as the page and the CSV write it."""
    name = item[0]
    if overall:
        scored, gated = item[1], item[2]
        parts = [f"{scored} scored"] + ([f"{gated} gated"] if gated else [])
        return f"{name} ({', '.join(parts)})"
    raw, status = item[1], item[2]
    if status == "gated":
        return f"{name}=gated (floor)"
    if status != "scored":
        return f"{name}={status}"
    return f"{name}={raw}"


def pred_text(item: list[Any], *, overall: bool) -> str:
    name, score, conf = item
    conf_text = "" if conf is None else f" @{conf}%"
    return f"{name}{conf_text}" if overall else f"{name}={score}{conf_text}"


def shares(row: dict[str, Any]) -> dict[str, int | None]:
    """People's and judges' shares of the evidence in whole percent, summing to 100 (None when
    there is no evidence: the estimate is the prior)."""
    if not row["n_reviewers"] and not row["n_predicted"]:
        return {"people_pct": None, "judge_pct": None}
    judge = round(100 * row["judge_share"])
    return {"people_pct": 100 - judge, "judge_pct": judge}


def display(rows: list[dict[str, Any]], *, categories: Sequence[int]) -> list[dict[str, Any]]:
    """Per-reader texts for the page; category answers are marked (outside the estimate)."""
    out = []
    for r in rows:
        overall = r["dimension"] == ALL
        scores = [
            {
                "text": score_text(s, overall=overall),
                "category": not overall and s[1] is not None and s[1] in categories,
                "gated": not overall and s[2] == "gated",
            }
            for s in r["scores"]
        ]
        preds = [pred_text(p, overall=overall) for p in r["preds"]]
        out.append({**r, **shares(r), "score_items": scores, "pred_items": preds})
    return out


CSV_HEADER = [
    "rank",
    "idea",
    "title",
    "domain",
    "dimension",
    "estimate",
    "low",
    "high",
    "p_top",
    "people_pct",
    "judge_pct",
    "n_reviewers",
    "n_gated",
    "n_predicted",
    "n_category",
    "scores",
    "predictions",
    "flags",
    "ordered_by",
    "shortlist_size",
    "p_top_n",
    "in_shortlist",
]


def csv_rows(rows: list[dict[str, Any]], *, sort: str) -> tuple[list[str], list[list[Any]]]:
    """The page's rows, every column the page shows, in the page's order."""
    out = []
    for r in rows:
        overall = r["dimension"] == ALL
        pct = shares(r)
        out.append(
            [
                r["rank"],
                r["idea"],
                r["title"],
                r["domain"],
                "all" if overall else r["dimension"],
                r["estimate"],
                r["low"],
                r["high"],
                r["p_top"],
                pct["people_pct"],
                pct["judge_pct"],
                r["n_reviewers"],
                r["n_gated"],
                r["n_predicted"],
                r["n_category"],
                "; ".join(score_text(s, overall=overall) for s in r["scores"]),
                "; ".join(pred_text(p, overall=overall) for p in r["preds"]),
                " ".join(f.code for f in r.get("flag_items", [])),
                SORTS.get(sort, SORTS[DEFAULT_SORT]),
                r.get("shortlist_size"),
                r.get("p_top_n"),
                None if "in_shortlist" not in r else ("true" if r["in_shortlist"] else "false"),
            ]
        )
    return CSV_HEADER, out
