"""Reads the other judge selectors share: rubrics, dimensions, the rating pool, ideas, labels."""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

import pandas as pd

from apps.catalog.models import Domain, Idea
from apps.judges.engine.judgment import RubricDimension
from apps.judges.engine.prompting import rubric_wording
from apps.judges.models import (
    LOCAL_LABEL,
    JudgeConfig,
)
from apps.screening.models import Dimension, Rating, Rubric

POOL_COLUMNS = ["rating_id", "idea_id", "patent_id", "reviewer_id", "domain", "dimension", "score"]


def rubric_for_domain(domain: Domain) -> Rubric | None:
    if domain.rubric_id:
        return domain.rubric
    return Rubric.objects.filter(is_default=True).first()


def rubric_dimension(dim: Dimension) -> RubricDimension:
    """A rubric dimension as the judge engine and the panels' debates read it."""
    return RubricDimension(
        key=dim.key,
        name=dim.name,
        description=dim.description,
        scale_min=dim.scale_min,
        scale_max=dim.scale_max,
        levels={int(k): str(v) for k, v in (dim.levels or {}).items()},
        categories=tuple(int(c) for c in (dim.categories or [])),
        wording=rubric_wording(dim.rubric),
    )


def dimensions_for_domain(domain: Domain, keys: Iterable[str] | None = None) -> list[Dimension]:
    rubric = rubric_for_domain(domain)
    if rubric is None:
        return []
    qs = rubric.dimensions.order_by("position")
    if keys is not None:
        qs = qs.filter(key__in=list(keys))
    return list(qs)


def scales_for(dimensions: Iterable[Dimension]) -> dict[str, tuple[int, int]]:
    return {d.key: (d.scale_min, d.scale_max) for d in dimensions}


def rating_pool_frame(*, domain: Domain, dimension_ids: Iterable[int]) -> pd.DataFrame:
    """Every scored rating in the domain on these dimensions: the few-shot example pool."""
    rows = (
        Rating.objects.filter(
            status=Rating.Status.SCORED,
            idea__patent__domain=domain,
            dimension_id__in=list(dimension_ids),
        )
        .values_list("id", "idea_id", "idea__patent_id", "reviewer_id", "dimension__key", "score")
        .order_by("id")
    )
    frame = pd.DataFrame(
        [(r[0], r[1], r[2], r[3], domain.key, r[4], r[5]) for r in rows], columns=POOL_COLUMNS
    )
    return frame.astype({"rating_id": int, "idea_id": int, "patent_id": int, "reviewer_id": int})


def rating_pool_rows(*, domain: Domain, dimension_ids: Iterable[int]) -> dict[int, list[list[int]]]:
    """The example pool as a run's plan stores it: per dimension id, every scored rating in the
    domain as [rating id, idea id, patent id, reviewer id, score], by rating id.

    One query for every dimension of the run, plain integers (no frame): a run's plan read the
    pool one dimension at a time through a frame (issue 28: the plan 0.07-0.13 -> 0.03 s)."""
    ids = list(dimension_ids)
    pools: dict[int, list[list[int]]] = {int(d): [] for d in ids}
    rows = (
        Rating.objects.filter(
            status=Rating.Status.SCORED, idea__patent__domain=domain, dimension_id__in=ids
        )
        .order_by("id")
        .values_list("dimension_id", "id", "idea_id", "idea__patent_id", "reviewer_id", "score")
    )
    for dimension_id, *row in rows:
        pools[dimension_id].append(cast(list[int], row))  # a scored rating has a score
    return pools


def idea_rows(idea_ids: Iterable[int]) -> dict[int, Idea]:
    return {i.id: i for i in Idea.objects.filter(id__in=set(idea_ids)).select_related("patent")}


def dimension_labels() -> dict[int, str]:
    """Each dimension's label in the judges' frames and figures, by dimension id.

    Its key, which pools a dimension shared by the domains of one rubric (PBIG's, the demo's).
    Two rubrics may use one key on different scales (a 0-3 "coherence" and a 0-100 one): their
    ratings must not be pooled into one alpha, nor read on one scale, so each is then labelled
    with its rubric, "coherence (summaries)".
    """
    dimensions = list(Dimension.objects.select_related("rubric").order_by("rubric_id", "position"))
    scales: dict[str, set[tuple[int, int]]] = {}
    for d in dimensions:
        scales.setdefault(d.key, set()).add((d.scale_min, d.scale_max))
    return {
        d.id: d.key if len(scales[d.key]) == 1 else f"{d.key} ({d.rubric.key})" for d in dimensions
    }


def _all_scales() -> dict[str, tuple[int, int]]:
    labels = dimension_labels()
    return {labels[d.id]: (d.scale_min, d.scale_max) for d in Dimension.objects.all()}


def dimension_names() -> dict[str, str]:
    """Display names by label (dimension_labels); the default rubric's name wins a shared key."""
    labels = dimension_labels()
    names: dict[str, str] = {}
    for d in Dimension.objects.order_by("-rubric__is_default", "position"):
        names.setdefault(labels[d.id], d.name)
    return names


def model_label(*, backend: str, model: str, response_mode: str) -> str:
    """How pages name what produced a figure: the local judge is never mistaken for an LLM."""
    if backend == JudgeConfig.Backend.LOCAL:
        return LOCAL_LABEL
    return f"{model or 'default model'} ({response_mode or 'mode not recorded'})"


def domain_by_key(key: str | None) -> Domain | None:
    return Domain.objects.filter(key=key).first() if key else None
