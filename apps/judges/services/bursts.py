"""Bursts of automatic runs: what reads every finished run is recomputed once a burst is over.

An import or a refresh queues a run per reviewer, and they finish one by one over minutes (at
1,000,000 ratings, hundreds of runs). The alignment snapshots read every finished evaluation and
the decision board every prediction; queued after each run, they were recomputed again and
again while the burst lasted (at 10,200 ratings, 64 % of a refresh's worker CPU went to
alignment snapshots of a burst not yet over; bench/bench_scale.py). So a finishing run queues
them only when no other run of the same kind (and scope) is still queued or running: the last
run of the burst does it, and sees every other one finished, because each run checks after its
own commit. While a long burst lasts, they are still queued once JUDGE_BURST_MAX_WAIT_SECONDS
have passed since the burst's first run finished, and again each time that much more has
passed (a cache marker holds when it was last due), so pages are never more stale than that;
where the recompute itself is long, the wait is MID_BURST_SHARE times its last duration
instead, so recomputes of a burst not yet over take at most a tenth of a worker (at 1,000,000
ratings the overall alignment scope takes a minute or more, and a refresh over an hour).
"""

from __future__ import annotations

import time

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


# While a burst lasts, a recompute waits at least this many times its last duration.
MID_BURST_SHARE = 10
# A marker outlives any burst's wait; one left by a burst whose last run never reported
# (a worker killed for good) only makes the next burst's first recompute due at once.
MARKER_SECONDS = 24 * 3600


def recompute_due(
    marker: str,
    *,
    purpose: str,
    run_id: int,
    domain_id: int | None = None,
    last_seconds: float = 0.0,
) -> bool:
    """Whether a run that just finished should queue the recompute named by ``marker``: the
    burst is over, or it is not and the wait has passed since the burst's first finished run
    or the last time it was due (module docstring; ``last_seconds``: how long the recompute
    took last time)."""
    key = marker_key(marker)
    if burst_over(purpose=purpose, exclude_run_id=run_id, domain_id=domain_id):
        cache.delete(key)  # the next burst starts its own clock
        return True
    now = time.time()
    if cache.add(key, now, timeout=MARKER_SECONDS):
        return False  # the burst's first finished run starts the clock
    since = cache.get(key)
    wait = max(float(settings.JUDGE_BURST_MAX_WAIT_SECONDS), MID_BURST_SHARE * last_seconds)
    if since is None or now - float(since) < wait:
        return False
    cache.set(key, now, timeout=MARKER_SECONDS)
    return True


def marker_key(marker: str) -> str:
    """The cache key of a burst's marker (JUDGE_CACHE_PREFIX: each test has its own)."""
    return f"{settings.JUDGE_CACHE_PREFIX}:burst:{marker}"
