"""Flags on Decide rows: the model's own, and those of the apps that read ideas another way.

A flag is a short badge on an idea's row with a title saying why. The model sets ONE_READER,
NO_READER and MOSTLY_JUDGES (apps/decisions/ranking/board.py). Two more come from the apps below
this one: FINDINGS_OPEN (apps/findings: reviewers' rationales on the idea are far from saturated,
so more readers would likely raise new points) and LLM_PANEL (apps/panels: a persona panel of LLM
judges scored the idea; its scores are shown in the title, labelled as judges, and never enter
the estimate). The page and the CSV both show every flag (the CSV by code), so they reconcile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from apps.decisions.ranking.model import ALL
from apps.decisions.ranking.rows import MOSTLY_JUDGES, NO_READER, ONE_READER
from apps.findings.selectors import unsaturated_idea_ids
from apps.panels.selectors import panel_scores_for_ideas


@dataclass(frozen=True)
class Flag:
    code: str
    label: str
    title: str


MODEL_FLAGS = {
    NO_READER: Flag(
        NO_READER,
        "No reader",
        "Nobody has read this idea: the estimate is the domain's average, or the domain text "
        "model's where its cross-validated check passed.",
    ),
    ONE_READER: Flag(ONE_READER, "One reader", "Only one person read this idea."),
    MOSTLY_JUDGES: Flag(
        MOSTLY_JUDGES,
        "Mostly judges",
        "More than half of the evidence behind this estimate comes from the domain text model "
        "and judges that read the idea (predictions that only echo its readers count for "
        "nothing and never raise this flag).",
    ),
}

FINDINGS_OPEN = "findings_open"
LLM_PANEL = "llm_panel"


def extra_flags(idea_ids: Sequence[int], *, domain: str, dimension: str) -> dict[int, list[Flag]]:
    """The findings and panel flags of the ideas shown (``dimension`` is a key or ALL)."""
    shown = {int(i) for i in idea_ids}
    out: dict[int, list[Flag]] = {}
    for idea_id in sorted(unsaturated_idea_ids(domain=domain) & shown):
        out.setdefault(idea_id, []).append(
            Flag(
                FINDINGS_OPEN,
                "Findings open",
                "Reviewers' rationales on this idea are far from saturated (estimated coverage "
                "below 60 %): another reader would likely raise points nobody has raised yet.",
            )
        )
    for idea_id, scores in panel_scores_for_ideas(idea_ids=shown).items():
        mine = [s for s in scores if dimension == ALL or s.dimension == dimension]
        if not mine:
            continue
        text = (
            "; ".join(f"{s.dimension_name} {s.after:.1f}" for s in mine if s.after is not None)
            or "no valid score"
        )
        out.setdefault(int(idea_id), []).append(
            Flag(
                LLM_PANEL,
                "LLM panel",
                f"{mine[0].label}, {mine[0].persona_source} personas on {mine[0].model}, after "
                f"debate: {text}. Judges' scores: not part of the estimate.",
            )
        )
    return out
