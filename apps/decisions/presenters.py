"""Shape the stored Decide rows for the page and the CSV (one function each, same rows)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from apps.decisions.flags import MODEL_FLAGS, Flag
from apps.decisions.ranking.cut import top_n_of
from apps.decisions.ranking.model import ALL
from apps.decisions.ranking.rows import slice_column, slice_idea

PAGE_SIZE = 100
SORTS = {
    "low": "lower bound of the 90 % interval, highest first",
    "estimate": "estimate, highest first",
    "p_top": "probability of being in the shortlist (P(top N)), highest first",
}
# Which board: everything the model weighs (people, the domain text model and judges that
# read the idea, where their checks pass), or the same model fitted on people's reads only.
EVIDENCE = [("all", "People, text model and judges"), ("people", "People's reads only")]
DEFAULT_EVIDENCE = "all"
# What a prediction adds (ranking/board.py BASES), as the page and the CSV write it.
BASIS_TEXT = {
    "scale": "scale only: built from this idea's reads, adds nothing new",
    "level": "level only: this reviewer's usual score, adds nothing on the idea",
    "text": "text rule: counted once, through the domain text model",
    "new": "new: a judge that read the idea, counted by its measured accuracy",
}
BASIS_SHORT = {"scale": "scale only", "level": "level only", "text": "via text model", "new": "new"}
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
    ordered = sorted(
        rows, key=lambda r: order_key(r[field], r["estimate"], r["title"], r["idea_id"])
    )
    return [{**r, "rank": n} for n, r in enumerate(ordered, start=1)]


def order_key(value: float, estimate: float, title: str, idea_id: int) -> tuple[Any, ...]:
    """Where a row sorts: the chosen value, highest first; ties go to the higher estimate,
    then the title, then the id, so the order is total."""
    return (-value, -estimate, title, idea_id)


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
        return f"{name}=gated (a stage closed; not scored)"
    if status != "scored":
        return f"{name}={status}"
    return f"{name}={raw}"


def pred_text(item: list[Any], *, overall: bool) -> str:
    """One prediction as the page and the CSV write it, with what it adds (BASIS_SHORT)."""
    name, score, conf = item[:3]
    basis = item[3] if len(item) > 3 else None
    conf_text = "" if conf is None else f" @{conf}%"
    basis_text = f" ({BASIS_SHORT[basis]})" if basis in BASIS_SHORT else ""
    return f"{name}{conf_text}{basis_text}" if overall else f"{name}={score}{conf_text}{basis_text}"


def dark_summary(
    result: dict[str, Any] | None, *, domain: str, evidence: str, labels: dict[str, str]
) -> dict[str, Any]:
    """The domain's ideas in the dark, from the snapshot's summary: how many nobody read, the
    expected number of the true top share among them (their summed P(top)), the routed reads
    the bench needed to settle such a shortlist, and per dimension (key, its name, the check)
    whether the text model gives unread ideas an estimate or stays out."""
    result = result or {}
    domains = (result.get("people") or {}).get("domains", {}) if evidence == "people" else {}
    info = (domains or result.get("domains") or {}).get(domain)
    if not info:
        return {}
    text = info.get("text") or {}
    checks = [(d, labels.get(d, d), c) for d, c in sorted(text.items())]
    return {
        **info,
        "text_used": [name for _, name, c in checks if c.get("used")],
        "text_checks": checks,
    }


def shares(row: dict[str, Any]) -> dict[str, int | None]:
    """People's and judges' shares of the evidence in whole percent, summing to 100 (None when
    there is no evidence: the estimate is the prior)."""
    if not row["n_reviewers"] and not row["judge_share"]:
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
    "evidence",
    "shortlist_size",
    "p_top_n",
    "in_shortlist",
]


def csv_rows(
    rows: list[dict[str, Any]], *, sort: str, evidence: str = DEFAULT_EVIDENCE
) -> tuple[list[str], list[list[Any]]]:
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
                evidence,
                r.get("shortlist_size"),
                r.get("p_top_n"),
                None if "in_shortlist" not in r else ("true" if r["in_shortlist"] else "false"),
            ]
        )
    return CSV_HEADER, out


def idea_standing(
    slices: Mapping[str, Any],
    *,
    idea_id: int,
    labels: Mapping[str, str],
    shortlist_n: int,
) -> dict[str, Any] | None:
    """One idea's place on every ranking of its domain, as Decide shows it: its rank in Decide's
    default order, estimate, interval, P(top) and P(top N) for the domain's shortlist size, the
    people's and judges' shares, its readers and the predictions used (each with the reviewer
    whose judge made it). ``slices``: the domain's stored slices by ranking. None when the
    snapshot does not rank the idea (it was added after the last computation).

    Only the idea's own row is built: its rank and P(top N) are read off the slice's columns
    (the idea page at a million ratings built every row of the domain's seven rankings)."""
    out: dict[str, Any] = {"overall": None, "dimensions": []}
    for dim, stored in slices.items():
        mine = slice_idea(stored, idea_id)
        if mine is None:
            continue
        ids = slice_column(stored, "idea_id")
        estimate = slice_column(stored, "estimate")
        p_top_n = top_n_of(
            estimate, slice_column(stored, "low"), slice_column(stored, "high"), n=shortlist_n
        )
        place = order_key(mine[DEFAULT_SORT], mine["estimate"], mine["title"], idea_id)
        ahead = sum(
            order_key(*row) < place
            for row in zip(
                slice_column(stored, DEFAULT_SORT),
                estimate,
                slice_column(stored, "title"),
                ids,
                strict=True,
            )
        )
        mine = {
            **mine,
            "rank": ahead + 1,
            "p_top_n": float(p_top_n[ids.index(idea_id)]),
            "shortlist_n": shortlist_n,
        }
        overall = dim == ALL
        entry = {
            **mine,
            **shares(mine),
            "of": len(ids),
            "name": "All dimensions (overall)" if overall else labels.get(dim, dim),
            "flag_items": [MODEL_FLAGS[c] for c in mine.get("flags", []) if c in MODEL_FLAGS],
            "score_items": [score_text(s, overall=overall) for s in mine["scores"]],
            "predictions": [
                {"reviewer": p[0], "score": p[1], "confidence": p[2]} for p in mine["preds"]
            ],
        }
        if overall:
            out["overall"] = entry
        else:
            out["dimensions"].append(entry)
    if out["overall"] is None:
        return None
    order = list(labels)
    out["dimensions"].sort(
        key=lambda e: order.index(e["dimension"]) if e["dimension"] in order else len(order)
    )
    return out
