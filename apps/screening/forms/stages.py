"""The rate form's stages as the template gets them (display.py's shapes): which dimensions
form a stage, in what order, and for each stage its fields when open or its reason and kept
values when closed. Built from a ScreeningForm (forms/screening.py), which decides what is open.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from apps.screening.forms.display import (
    DimensionView,
    KeptValue,
    LevelView,
    QuestionView,
    StageView,
)
from apps.screening.forms.names import answer_name, rationale_name, score_name, skip_name
from apps.screening.models import Dimension

if TYPE_CHECKING:
    from apps.screening.forms.screening import ScreeningForm


def _stage_depths(dimensions: Sequence[Dimension]) -> dict[str, int]:
    """Stage of each dimension: 0 without requirements, else one past its deepest requirement.

    Requirements always point to earlier dimensions, so one pass in rubric order suffices.
    """
    depth: dict[str, int] = {}
    for dim in dimensions:
        depth[dim.key] = 1 + max((depth.get(r, 0) for r in dim.requires), default=-1)
    return depth


def stage_views(form: ScreeningForm) -> list[StageView]:
    """The rubric as ordered stages; open ones carry their fields, closed ones their reason."""
    merged = form.merged_scores()
    open_set = set(form.open_keys())
    lost = {d.key for d in form.closing_losses()}
    stages: list[StageView] = []
    for number, (required, dims) in enumerate(stage_groups(form.dimensions)):
        conditions = [_condition(form.by_key[r]) for r in required if r in form.by_key]
        stage = StageView(
            number=number + 1,
            dimensions=dims,
            is_open=all(d.key in open_set for d in dims),
            opens_when=" and ".join(conditions),
        )
        if stage.is_open:
            stage.fields = [_dimension_view(form, d, merged) for d in dims]
        else:
            stage.closed_because = _closed_because(form, list(required), merged)
            stage.kept = [kv for d in dims for kv in _kept(form, d)]
            stage.losses = [d.name for d in dims if d.key in lost]
        stages.append(stage)
    return stages


def stage_groups(dimensions: Sequence[Dimension]) -> list[tuple[tuple[str, ...], list[Dimension]]]:
    """(requirements, dimensions) of each stage, in the order the form shows them: a stage
    is the dimensions sharing one set of requirements, ordered by depth, then position."""
    depths = _stage_depths(dimensions)
    grouped: dict[tuple[int, tuple[str, ...]], list[Dimension]] = {}
    for dim in dimensions:
        grouped.setdefault((depths[dim.key], tuple(dim.requires)), []).append(dim)
    ordered = sorted(grouped.items(), key=lambda kv: (kv[0][0], kv[1][0].position))
    return [(required, dims) for (_depth, required), dims in ordered]


def form_order(dimensions: Sequence[Dimension]) -> list[Dimension]:
    """Every dimension in the order the form shows it (stage by stage)."""
    return [d for _required, dims in stage_groups(dimensions) for d in dims]


def _kept(form: ScreeningForm, dim: Dimension) -> list[KeptValue]:
    """The values of a closed dimension, as hidden inputs that travel with the form."""
    kept: list[KeptValue] = []
    if dim.optional and form.posted_value(skip_name(dim)):
        kept.append(KeptValue(skip_name(dim), "on"))
    if dim.questions:
        for q in dim.questions:
            answer = form.posted_value(answer_name(dim, q["key"]))
            if answer is not None:
                kept.append(KeptValue(answer_name(dim, q["key"]), "yes" if answer else "no"))
    else:
        score = form.posted_value(score_name(dim))
        if score is not None:
            kept.append(KeptValue(score_name(dim), str(score)))
    text = form.posted_value(rationale_name(dim)) or ""
    if text:
        kept.append(KeptValue(rationale_name(dim), text))
    return kept


def _condition(dim: Dimension) -> str:
    if dim.pass_above is None:
        return f"{dim.name} is rated"
    return f"{dim.name} is above {dim.pass_above}"


def _closed_because(
    form: ScreeningForm, required: list[str], merged: Mapping[str, int | None]
) -> str:
    """'waiting' while an upstream score is missing, 'closed' once one fails its gate."""
    for key in required:
        dim = form.by_key.get(key)
        if dim is None:
            continue
        score = merged.get(key)
        if score is not None and not dim.rule().passes(score):
            return "closed"
    return "waiting"


def _dimension_view(
    form: ScreeningForm, dim: Dimension, merged: Mapping[str, int | None]
) -> DimensionView:
    current = form.posted_value(score_name(dim)) if not dim.questions else merged.get(dim.key)
    categories = {int(c) for c in dim.categories}
    skipped = bool(dim.optional and form.posted_value(skip_name(dim)))
    return DimensionView(
        dim=dim,
        name=score_name(dim),
        levels=[
            LevelView(
                value=v,
                meaning=m,
                checked=(current == v and not skipped),
                is_category=v in categories,
            )
            for v, m in dim.level_choices()
        ],
        questions=[
            QuestionView(
                key=q["key"],
                text=q["text"],
                name=answer_name(dim, q["key"]),
                answer=None if skipped else form.posted_value(answer_name(dim, q["key"])),
            )
            for q in dim.questions
        ],
        rationale_name=rationale_name(dim),
        rationale=form.posted_value(rationale_name(dim)) or "",
        derived_score=merged.get(dim.key) if dim.questions and not skipped else None,
        skip_name=skip_name(dim) if dim.optional else "",
        skipped=skipped,
        errors=form.field_errors(dim),
    )
