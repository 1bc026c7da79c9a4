"""Shapes the stored findings for pages, CSV and the command."""

from __future__ import annotations

from typing import Any

# The CSV columns of a scope row (one home, used by the CSV export and the API docs).
SCOPE_CSV_COLUMNS = [
    "scope",
    "n_rationales",
    "n_units",
    "n_findings",
    "n_reviewers",
    "chao2",
    "chao2_low",
    "chao2_high",
    "coverage",
    "expected_new_1",
    "expected_new_2",
    "expected_new_5",
    "k80",
]
FINDING_CSV_COLUMNS = ["idea_id", "finding_id", "name", "n_reviewers", "reviewers", "units"]


def scope_rows(
    section: dict[str, Any] | None, *, domain: str, only_idea: int | None = None
) -> list[dict[str, Any]]:
    """Domain, dimension and idea scopes of one domain's section, as flat dicts with `scope`."""
    if not section:
        return []
    rows: list[dict[str, Any]] = []
    if only_idea is None:
        rows.append({"scope": f"domain:{domain}", **section["scope"]})
        rows += [
            {"scope": f"dimension:{domain}/{dim}", **est}
            for dim, est in section["dimensions"].items()
        ]
    for idea_id, est in section.get("ideas", {}).items():
        if only_idea is None or int(idea_id) == only_idea:
            rows.append(
                {"scope": f"idea:{idea_id}", **{k: v for k, v in est.items() if k != "findings"}}
            )
    return rows


def scope_csv_row(row: dict[str, Any]) -> list[Any]:
    c = row["chao2"]
    new = row["expected_new"]
    return [
        row["scope"],
        row["n_rationales"],
        row["n_units"],
        row["n_findings"],
        row.get("n_reviewers"),
        c["estimate"],
        c["low"],
        c["high"],
        row["coverage"],
        new["1"],
        new["2"],
        new["5"],
        row.get("k80"),
    ]


def side_by_side(saturation: dict[str, Any], reliability: dict[str, Any] | None) -> dict[str, Any]:
    """The page's headline: 'k reviewers give a reliable score; k' surface 80 % of findings'."""
    return {
        "k_reliable": (reliability or {}).get("k"),
        "reliability_target": (reliability or {}).get("target"),
        "k_findings": saturation.get("k80"),
        "n_ideas": saturation.get("n_ideas", 0),
    }
