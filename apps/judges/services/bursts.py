"""Bursts of automatic runs: what reads every finished run is recomputed once a burst is over.

An import or a refresh queues a run per reviewer, and they finish one by one over minutes (at
1,000,000 ratings, hundreds of runs). The alignment snapshots read every finished evaluation and
the decision board every prediction; queued after each run, they were recomputed again and
again while the burst lasted (at 10,200 ratings, 64 % of a refresh's worker CPU went to
alignment snapshots of a burst not yet over; bench/bench_scale.py). So a finishing run queues
them only when no other run of the same kind (and scope) is still queued or running: the last
run of the burst does it, and sees every other one finished, because each run checks after its
own commit. While a long burst lasts, they are still queued at most once per
JUDGE_BURST_MAX_WAIT_SECONDS (a cache marker), so pages are never more stale than that.
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache

from apps.judges.models import JudgeRun


def burst_over(*, purpose: str, exclude_run_id: int, domain_id: int | None = None) -> bool:
    """No other run of this purpose (in this domain, when given) is queued or running."""
    others = JudgeRun.objects.filter(purpose=purpose, status__in=JudgeRun.ACTIVE).exclude(
        id=exclude_run_id
    )
    if domain_id is not None:
        others = others.filter(domain_id=domain_id)
    return not others.exists()


def recompute_due(marker: str, *, purpose: str, run_id: int, domain_id: int | None = None) -> bool:
    """Whether a run that just finished should queue the recompute named by ``marker``: the
    burst is over, or nothing queued it for JUDGE_BURST_MAX_WAIT_SECONDS."""
    if burst_over(purpose=purpose, exclude_run_id=run_id, domain_id=domain_id):
        return True
    wait = int(settings.JUDGE_BURST_MAX_WAIT_SECONDS)
    return bool(cache.add(marker_key(marker), 1, timeout=max(1, wait)))


def marker_key(marker: str) -> str:
    """The cache key of a burst's marker (JUDGE_CACHE_PREFIX: each test has its own)."""
    return f"{settings.JUDGE_CACHE_PREFIX}:burst:{marker}"
