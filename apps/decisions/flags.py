"""Flags on Decide rows: the model's own, and the hook other apps use to add theirs.

A flag is a short badge on an idea's row with a title saying why. The model sets ONE_READER,
NO_READER and MOSTLY_JUDGES (apps/decisions/ranking/board.py). Other apps contribute through
``FLAG_SOURCES``: a callable taking the idea ids shown and returning {idea id: [Flag, ...]}.
Register one in your AppConfig.ready(), e.g. the findings app for ideas whose findings are not
saturated, or the panels app for ideas a persona panel scored (panel scores count as judges):

    from apps.decisions.flags import FLAG_SOURCES, Flag
    FLAG_SOURCES.append(lambda ids: {i: [Flag("findings_open", "Findings open", "...")] ...})

The page and the CSV both show every flag (the CSV by code), so they stay reconciled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from apps.decisions.ranking.board import MOSTLY_JUDGES, NO_READER, ONE_READER


@dataclass(frozen=True)
class Flag:
    code: str
    label: str
    title: str


MODEL_FLAGS = {
    NO_READER: Flag(
        NO_READER, "No reader", "Nobody has read this idea: the estimate is the prior."
    ),
    ONE_READER: Flag(ONE_READER, "One reader", "Only one person read this idea."),
    MOSTLY_JUDGES: Flag(
        MOSTLY_JUDGES,
        "Mostly judges",
        "More than half of the evidence behind this estimate comes from judges' predictions.",
    ),
}

FlagSource = Callable[[Sequence[int]], Mapping[int, Sequence[Flag]]]
FLAG_SOURCES: list[FlagSource] = []


def extra_flags(idea_ids: Sequence[int]) -> dict[int, list[Flag]]:
    """The flags every registered source gives the ideas shown."""
    out: dict[int, list[Flag]] = {}
    for source in FLAG_SOURCES:
        for idea_id, flags in source(idea_ids).items():
            out.setdefault(int(idea_id), []).extend(flags)
    return out
