"""The per-domain choice of item text parts for the offline judge's text fallback (issue 17).

``item_parts_measure(domain)`` replays the text-only judge in leave-one-out on the domain's
scored ratings once per candidate (idea + source, idea only, source only;
apps.judges.engine.item_parts), stores the choice and its figures (``ItemTextChoice``), and
drops the domain's stored vectors of other parts so the next run refits them once
(apps.judges.vectors reads the choice). Run by ``manage.py judge_item_parts`` or the task
``judges.item_parts_measure``; never in a request.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from apps.catalog.models import Domain
from apps.core.errors import ApplicationError, FieldError
from apps.judges.engine.item_parts import SEEDS, K, PartsChoice, measure_item_parts
from apps.judges.engine.item_text import vector_model
from apps.judges.models import ItemTextChoice, ItemVector
from apps.judges.vectors import domain_texts
from apps.screening.models import Dimension, Rating


def item_parts_measure(*, domain: Domain, k: int = K, seeds: int = len(SEEDS)) -> ItemTextChoice:
    """Measure the candidates on the domain's ratings and store the choice (module docstring)."""
    if not 1 <= int(k) <= 50:
        raise ApplicationError("Bad k.", errors=[FieldError("k", "must be 1 to 50", value=str(k))])
    if not 1 <= int(seeds) <= 10:
        raise ApplicationError(
            "Bad seeds.", errors=[FieldError("seeds", "must be 1 to 10", value=str(seeds))]
        )
    texts = domain_texts(domain.id)
    ratings = list(
        Rating.objects.filter(
            idea__patent__domain=domain, status=Rating.Status.SCORED, score__isnull=False
        ).values_list("idea_id", "reviewer_id", "dimension__key", "score")
    )
    keys = {r[2] for r in ratings}
    scales = {
        key: (lo, hi)
        for key, lo, hi in Dimension.objects.filter(key__in=keys).values_list(
            "key", "scale_min", "scale_max"
        )
    }
    choice: PartsChoice = measure_item_parts(
        texts,
        ((int(i), int(r), str(d), int(s)) for i, r, d, s in ratings if s is not None),
        scales,
        k=int(k),
        seeds=tuple(range(int(seeds))),
    )
    with transaction.atomic():
        stored, _ = ItemTextChoice.objects.update_or_create(
            domain=domain,
            defaults={
                "parts": choice.parts,
                "measurement": choice.to_dict(),
                "measured_at": timezone.now(),
            },
        )
        # Vectors of other parts are stale for this domain: the next run refits it, once.
        ItemVector.objects.filter(idea__patent__domain=domain).exclude(
            model=vector_model(choice.parts)
        ).delete()
    return stored


def item_parts_measure_all(*, k: int = K, seeds: int = len(SEEDS)) -> list[ItemTextChoice]:
    return [
        item_parts_measure(domain=domain, k=k, seeds=seeds)
        for domain in Domain.objects.order_by("key")
    ]
