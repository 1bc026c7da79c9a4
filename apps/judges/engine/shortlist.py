"""Shortlists: the few unread ideas a reviewer should look at first (pure; no Django).

Per reviewer (the caller passes one reviewer's finals of one domain):
- per dimension, the top ``size`` ideas by predicted score, ties broken by the higher
  confidence, then the lower idea id (so the order is reproducible); ideas with no kept
  prediction are never shortlisted;
- over all dimensions (``dimension_id`` None), ideas ranked by the mean position of their
  predictions on each dimension's scale, 0 = bottom, 1 = top (scales differ, positions do not),
  over the dimensions with a kept prediction; that mean is the entry's ``predicted_score``,
  its confidence the mean confidence, its signal the most common one (ties: panel, text,
  level).

Per domain, the panel's shortlist (``panel_shortlists``): the same two kinds of list, where an
idea's predicted score on a dimension is the MEAN of the predictions of every reviewer of the
domain who has not read it (each reviewer's newest personalized prediction), over the ideas
that most of the domain's reviewers concerned have not read yet (reviewers with a prediction
outnumber those who scored it); confidence = the mean confidence, signal = the most common,
``panel_size`` = the reviewers whose predictions are averaged.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

SIGNAL_ORDER = ("panel", "text", "level", "")


@dataclass(frozen=True)
class Candidate:
    idea_id: int
    dimension_id: int
    score: int | None
    confidence: int | None
    signal: str
    panel_size: int
    scale_min: int
    scale_max: int


@dataclass(frozen=True)
class Entry:
    dimension_id: int | None
    idea_id: int
    rank: int
    predicted_score: float
    confidence: int | None
    signal: str
    panel_size: int


def _top(
    rows: list[tuple[float, int | None, int, str, int]], dimension_id: int | None, size: int
) -> list[Entry]:
    rows.sort(key=lambda r: (-r[0], -(r[1] if r[1] is not None else -1), r[2]))
    return [
        Entry(dimension_id, idea, n + 1, score, conf, signal, panel)
        for n, (score, conf, idea, signal, panel) in enumerate(rows[:size])
    ]


def shortlists(candidates: Iterable[Candidate], *, size: int) -> list[Entry]:
    if size < 1:
        raise ValueError(f"the shortlist size must be 1 or more; got {size}")
    by_dim: dict[int, list[tuple[float, int | None, int, str, int]]] = defaultdict(list)
    by_idea: dict[int, list[Candidate]] = defaultdict(list)
    for c in candidates:
        if c.score is None:
            continue
        by_dim[c.dimension_id].append(
            (float(c.score), c.confidence, c.idea_id, c.signal, c.panel_size)
        )
        by_idea[c.idea_id].append(c)
    out: list[Entry] = []
    for dimension_id in sorted(by_dim):
        out.extend(_top(by_dim[dimension_id], dimension_id, size))
    overall = []
    for idea_id, cs in by_idea.items():
        positions = [
            (c.score - c.scale_min) / (c.scale_max - c.scale_min)
            if c.scale_max > c.scale_min
            else 0.5
            for c in cs
            if c.score is not None
        ]
        confs = [c.confidence for c in cs if c.confidence is not None]
        counts = Counter(c.signal for c in cs)
        signal = min(
            counts, key=lambda s: (-counts[s], SIGNAL_ORDER.index(s) if s in SIGNAL_ORDER else 9)
        )
        overall.append(
            (
                round(sum(positions) / len(positions), 4),
                round(sum(confs) / len(confs)) if confs else None,
                idea_id,
                signal,
                max(c.panel_size for c in cs),
            )
        )
    out.extend(_top(overall, None, size))
    return out


@dataclass(frozen=True)
class PanelCandidate:
    """One reviewer's prediction of an unread idea, for the domain's panel shortlist."""

    reviewer_id: int
    idea_id: int
    dimension_id: int
    score: int | None
    confidence: int | None
    signal: str
    scale_min: int
    scale_max: int


def _most_common(signals: list[str]) -> str:
    counts = Counter(signals)
    return min(
        counts, key=lambda s: (-counts[s], SIGNAL_ORDER.index(s) if s in SIGNAL_ORDER else 9)
    )


def panel_shortlists(
    candidates: Iterable[PanelCandidate],
    *,
    readers: dict[tuple[int, int], int],
    size: int,
) -> list[Entry]:
    """The domain's panel shortlists (module docstring). ``readers[(dimension_id, idea_id)]``:
    how many reviewers have scored the idea on the dimension (absent: none)."""
    if size < 1:
        raise ValueError(f"the shortlist size must be 1 or more; got {size}")
    cells: dict[tuple[int, int], dict[int, PanelCandidate]] = defaultdict(dict)
    for c in candidates:
        if c.score is not None:
            cells[(c.dimension_id, c.idea_id)][c.reviewer_id] = c
    by_dim: dict[int, list[tuple[float, int | None, int, str, int]]] = defaultdict(list)
    positions: dict[int, list[tuple[float, int | None, str, int]]] = defaultdict(list)
    for (dimension_id, idea_id), by_reviewer in cells.items():
        cs = list(by_reviewer.values())
        if len(cs) <= readers.get((dimension_id, idea_id), 0):
            continue  # read by most of the reviewers concerned: not a discovery any more
        mean = sum(float(c.score) for c in cs if c.score is not None) / len(cs)
        confs = [c.confidence for c in cs if c.confidence is not None]
        conf = round(sum(confs) / len(confs)) if confs else None
        signal = _most_common([c.signal for c in cs])
        by_dim[dimension_id].append((round(mean, 4), conf, idea_id, signal, len(cs)))
        lo, hi = cs[0].scale_min, cs[0].scale_max
        position = (mean - lo) / (hi - lo) if hi > lo else 0.5
        positions[idea_id].append((position, conf, signal, len(cs)))
    out: list[Entry] = []
    for dimension_id in sorted(by_dim):
        out.extend(_top(by_dim[dimension_id], dimension_id, size))
    overall = []
    for idea_id, ps in positions.items():
        confs = [c for _, c, _, _ in ps if c is not None]
        overall.append(
            (
                round(sum(p for p, _, _, _ in ps) / len(ps), 4),
                round(sum(confs) / len(confs)) if confs else None,
                idea_id,
                _most_common([s for _, _, s, _ in ps]),
                max(n for _, _, _, n in ps),
            )
        )
    out.extend(_top(overall, None, size))
    return out
