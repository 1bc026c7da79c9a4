"""Automatic judge runs: from rating changes to queued runs, and the reclaim of lost work.

How a write storm stays one task per reviewer (issue 9.7, the disagreement app's debounce):
- every rating change calls `judge_ratings_changed` after its commit;
- a reviewer's pending scheduling is a JudgeScheduleRequest row in status QUEUED, at most one
  per reviewer (partial unique constraint). If it exists, the change only moves its
  `changed_at` forward (one UPDATE), and no task is sent: the pending task will read it;
- otherwise a QUEUED row is created and one task is sent with the debounce countdown;
- the task claims its rows QUEUED -> RUNNING, so a change arriving while it works creates a
  fresh row and a fresh task: no change is ever left unread.

The reclaim job (`services.reclaim.judge_runs_reclaim`, every JUDGE_RECLAIM_SECONDS via Celery
beat) sends again the runs whose worker died (stale heartbeat) or whose message was lost, and
the scheduling rows no task took.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Max
from django.db.models.functions import Now
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.judges import selectors
from apps.judges.models import (
    JudgeConfig,
    JudgeHistory,
    JudgeRun,
    JudgeScheduleRequest,
)
from apps.judges.services import dispatch
from apps.judges.services.configs import config_cannot_run, judge_configs_ensure_defaults
from apps.judges.services.runs import (
    judge_run_request,
    looks_lost,
    scope_key,
)

log = logging.getLogger(__name__)

SCHEDULE_BATCH = 200  # reviewers per transaction (keeps every IN list and transaction short)


def db_now() -> datetime:
    """The database server's clock: run start times are taken from it too (the run claim), so
    comparing the two never depends on two machines' clocks agreeing."""
    if connection.vendor == "postgresql":
        sql = "SELECT clock_timestamp()"
    elif connection.vendor == "sqlite":
        sql = "SELECT STRFTIME('%Y-%m-%d %H:%M:%f', 'NOW')"
    else:
        return timezone.now()
    with connection.cursor() as cur:
        cur.execute(sql)
        value = cur.fetchone()[0]
    if isinstance(value, str):
        value = datetime.fromisoformat(value).replace(tzinfo=UTC)
    return value


def judge_ratings_changed(*, reviewer_ids: Iterable[int]) -> int:
    """These reviewers' ratings changed (called after their commit): schedule judge work.

    Debounced (module docstring): a reviewer with a pending scheduling costs one UPDATE and
    sends nothing; the others get a pending row each and share ONE task. Deciding which runs to
    queue reads every reviewer's history, which after a large import takes long enough that it
    must not happen in the web request: it happens in the task (`judge_runs_schedule`).
    Returns the number of reviewers the task was sent for (0: all were pending already).
    """
    ids = sorted({int(i) for i in reviewer_ids})
    selectors.forget_history_gaps()
    if not ids:
        return 0
    pending = JudgeScheduleRequest.objects.filter(
        reviewer_id__in=ids, status=JudgeScheduleRequest.Status.QUEUED
    )
    # The usual case in a stream of writes (one reviewer submitting again within the debounce):
    # every reviewer has a pending row already, and one UPDATE is the whole cost.
    if pending.update(changed_at=Now()) == len(ids):
        return 0
    joined = set(pending.values_list("reviewer_id", flat=True))
    fresh = [i for i in ids if i not in joined]
    if not fresh:
        return 0
    countdown = float(settings.JUDGE_DEBOUNCE_SECONDS)
    now = db_now()
    try:
        with transaction.atomic():
            JudgeScheduleRequest.objects.bulk_create(
                [JudgeScheduleRequest(reviewer_id=i, changed_at=now, sent_at=now) for i in fresh]
            )
    except IntegrityError:
        # Another process created some of these rows meanwhile: theirs will be read by their
        # task; keep only the reviewers still without a pending row.
        created = []
        for reviewer_id in fresh:
            try:
                with transaction.atomic():
                    JudgeScheduleRequest.objects.create(
                        reviewer_id=reviewer_id, changed_at=now, sent_at=now
                    )
                created.append(reviewer_id)
            except IntegrityError:
                JudgeScheduleRequest.objects.filter(
                    reviewer_id=reviewer_id, status=JudgeScheduleRequest.Status.QUEUED
                ).update(changed_at=now)
        fresh = created
    if fresh:
        dispatch.send_schedule(fresh, countdown=countdown, changed_at=now)
    return len(fresh)


def judge_schedule_requests_run(
    *, reviewer_ids: Iterable[int], changed_at: datetime | None = None
) -> dict[str, int]:
    """The scheduling task's body: claim these reviewers' pending rows, schedule, clear them.

    Claiming (QUEUED -> RUNNING) first means a change arriving from now on makes a new row and
    a new task, so nothing it wrote is missed; the latest `changed_at` of the claimed rows is
    what the runs must have read.
    """
    ids = sorted({int(i) for i in reviewer_ids})
    rows = JudgeScheduleRequest.objects.filter(
        reviewer_id__in=ids, status=JudgeScheduleRequest.Status.QUEUED
    )
    latest = rows.aggregate(latest=Max("changed_at"))["latest"]
    claimed = list(rows.values_list("id", flat=True))
    if not claimed:
        # A duplicate message (the reclaim sent a scheduling again that was only late, or Redis
        # redelivered one): the first delivery claimed the rows and did the work.
        return {"created": 0, "reused": 0, "rerun_requested": 0, "requeued": 0}
    JudgeScheduleRequest.objects.filter(
        id__in=claimed, status=JudgeScheduleRequest.Status.QUEUED
    ).update(status=JudgeScheduleRequest.Status.RUNNING)
    if latest is not None and (changed_at is None or latest > changed_at):
        changed_at = latest
    try:
        return judge_runs_schedule(reviewer_ids=ids, changed_at=changed_at)
    finally:
        JudgeScheduleRequest.objects.filter(id__in=claimed).delete()


@dataclass(frozen=True)
class _Wanted:
    purpose: str
    reviewer_id: int
    domain_id: int
    dimensions: tuple[str, ...]  # sorted
    config_ids: tuple[int, ...]

    @property
    def key(self) -> str:
        return scope_key(
            purpose=self.purpose,
            reviewer_id=self.reviewer_id,
            domain_id=self.domain_id,
            dimensions=self.dimensions,
            config_ids=self.config_ids,
            shots=(),
            seeds=None,
            backend="",
        )


def judge_runs_schedule(
    *,
    reviewer_ids: Iterable[int],
    countdown: float = 0,
    changed_at: datetime | None = None,
) -> dict[str, int]:
    """Queue the automatic judge runs these reviewers' histories call for (runs in a worker).

    For each domain where a reviewer has at least `min_history` scored ratings on a dimension:
    a leave-one-out evaluation with every eligible active automatic configuration, and a
    prediction run over the domain's ideas they have not rated (personalized configurations,
    domains of their profile). One run of each purpose covers every dimension with the same
    eligible configurations (usually all of the domain's): a run's fixed cost (its plan,
    finals, shortlists, hooks: some 60 queries) was most of a refresh when each dimension had
    its own run (docs/operations.md, "Scaling out"). A queued run for the scope is reused (it
    reads the ratings when it starts); a running one is marked for a rerun. Evaluations are sent
    before predictions so the alignment dashboard fills first.

    `changed_at` (when the ratings changed): a run of the scope that started after it has read
    those ratings already, so it needs neither a successor nor a rerun. Without this, a trigger
    that waited in the queue while its scope was judged would judge it again for nothing.

    Cost: per batch of reviewers one aggregate query for the histories, one for their profiles,
    one for their active runs, then bulk inserts; not one query per reviewer or scope.
    Returns counts: created, reused, rerun_requested, requeued.
    """
    judge_configs_ensure_defaults()
    summary = {"created": 0, "reused": 0, "rerun_requested": 0, "requeued": 0}
    # A configuration the running settings cannot run (services.configs) is skipped, not queued:
    # it would fail the runs it joins, the built-in local judges' included. The judges page
    # names it with the reason.
    configs = [c for c in selectors.active_auto_configs() if not config_cannot_run(c)]
    ids = sorted({int(i) for i in reviewer_ids})
    if not configs or not ids:
        return summary
    domains = {d.id: d for d in Domain.objects.select_related("rubric")}
    known = {
        d_id: {dim.key for dim in selectors.dimensions_for_domain(d)} for d_id, d in domains.items()
    }
    for start in range(0, len(ids), SCHEDULE_BATCH):
        batch = ids[start : start + SCHEDULE_BATCH]
        counts = selectors.reviewers_history_counts(reviewer_ids=batch)
        profile_domains = selectors.reviewers_profile_domain_ids(reviewer_ids=batch)
        # (purpose, reviewer, domain, configurations) -> the dimensions they judge.
        groups: dict[tuple[str, int, int, tuple[int, ...]], list[str]] = {}
        for row in counts:
            reviewer_id, domain_id, dim = row["reviewer_id"], row["domain_id"], row["dimension"]
            if domain_id not in domains or dim not in known[domain_id]:
                continue  # a rating on a dimension outside the domain's rubric: nothing to judge
            eligible = [c for c in configs if row["n"] >= c.min_history]
            if not eligible:
                continue
            evaluation = (
                JudgeRun.Purpose.LOO_EVALUATION,
                reviewer_id,
                domain_id,
                tuple(c.id for c in eligible),
            )
            groups.setdefault(evaluation, []).append(dim)
            personal = tuple(c.id for c in eligible if c.kind == JudgeConfig.Kind.PERSONALIZED)
            mine = profile_domains.get(reviewer_id, set())
            if personal and (not mine or domain_id in mine):
                prediction = (JudgeRun.Purpose.PREDICTION, reviewer_id, domain_id, personal)
                groups.setdefault(prediction, []).append(dim)
        wanted = [
            _Wanted(purpose, reviewer_id, domain_id, tuple(sorted(dims)), config_ids)
            for (purpose, reviewer_id, domain_id, config_ids), dims in groups.items()
        ]
        # Evaluations first (a stable sort keeps the histories' order within each purpose).
        wanted.sort(key=lambda w: w.purpose != JudgeRun.Purpose.LOO_EVALUATION)
        for key, n in _runs_request_many(
            wanted,
            reviewer_ids=batch,
            countdown=countdown,
            changed_at=changed_at,
        ).items():
            summary[key] += n
    if any(summary.values()):
        log.info("judge scheduling for %s reviewers: %s", len(ids), summary)
    return summary


@transaction.atomic
def _runs_request_many(
    wanted: list[_Wanted],
    *,
    reviewer_ids: list[int],
    countdown: float,
    changed_at: datetime | None = None,
) -> dict[str, int]:
    """`judge_run_request` for many automatic scopes at once, with the same invariants."""
    out = {"created": 0, "reused": 0, "rerun_requested": 0, "requeued": 0}
    if not wanted:
        return out
    read_already: set[str] = set()
    if changed_at is not None:
        read_already = set(
            JudgeRun.objects.filter(
                reviewer_id__in=reviewer_ids,
                purpose__in=JudgeRun.AUTOMATIC,
                status__in=[JudgeRun.Status.RUNNING, JudgeRun.Status.DONE],
                started_at__gt=changed_at,
            ).values_list("scope_key", flat=True)
        )
    active = {
        r.scope_key: r
        for r in JudgeRun.objects.select_for_update().filter(
            reviewer_id__in=reviewer_ids, purpose__in=JudgeRun.AUTOMATIC, status__in=JudgeRun.ACTIVE
        )
    }
    rerun: list[int] = []
    resend: list[int] = []
    fresh: list[_Wanted] = []
    for w in wanted:
        run = active.get(w.key)
        if w.key in read_already and (run is None or run.status == JudgeRun.Status.RUNNING):
            out["reused"] += 1
            continue
        if run is None:
            fresh.append(w)
            continue
        if run.status == JudgeRun.Status.RUNNING and not run.rerun_requested:
            rerun.append(run.id)
        if looks_lost(run, countdown):
            # Its message may have been lost (broker down at enqueue time), or its worker died:
            # send it again. A duplicate delivery is harmless, the claim and the lease see to it.
            resend.append(run.id)
        elif run.status == JudgeRun.Status.QUEUED:
            out["reused"] += 1
    now = timezone.now()
    if rerun:
        JudgeRun.objects.filter(id__in=rerun).update(rerun_requested=True, updated_at=now)
    if resend:
        JudgeRun.objects.filter(id__in=resend).update(updated_at=now, heartbeat_at=now)
    out["rerun_requested"], out["requeued"] = len(rerun), len(resend)

    created: list[JudgeRun] = []
    if fresh:
        rows = [
            JudgeRun(
                purpose=w.purpose,
                reviewer_id=w.reviewer_id,
                domain_id=w.domain_id,
                dimensions=list(w.dimensions),
                shots=[],
                scope_key=w.key,
            )
            for w in fresh
        ]
        try:
            with transaction.atomic():
                created = JudgeRun.objects.bulk_create(rows, batch_size=500)
        except IntegrityError:
            # Another process queued one of these scopes meanwhile: fall back to one at a time,
            # which resolves each conflict the way judge_run_request always has.
            configs = {c.id: c for c in JudgeConfig.objects.filter(is_active=True)}
            reviewers = {u.id: u for u in User.objects.filter(id__in=reviewer_ids)}
            domains = {d.id: d for d in Domain.objects.filter(id__in={w.domain_id for w in fresh})}
            for w in fresh:
                _, made = judge_run_request(
                    purpose=w.purpose,
                    domain=domains[w.domain_id],
                    dimensions=list(w.dimensions),
                    configs=[configs[i] for i in w.config_ids if i in configs],
                    reviewer=reviewers[w.reviewer_id],
                    countdown=countdown,
                )
                out["created" if made else "reused"] += 1
            created = []
        else:
            if any(r.pk is None for r in created):  # no RETURNING on this database
                by_key = dict(
                    JudgeRun.objects.filter(
                        scope_key__in=[w.key for w in fresh], status=JudgeRun.Status.QUEUED
                    ).values_list("scope_key", "id")
                )
                for r in created:
                    r.pk = r.id = by_key[r.scope_key]
            through = JudgeRun.configs.through
            through.objects.bulk_create(
                [
                    through(judgerun_id=run.id, judgeconfig_id=config_id)
                    for run, w in zip(created, fresh, strict=True)
                    for config_id in w.config_ids
                ],
                batch_size=500,
            )
            JudgeHistory.objects.bulk_create(
                [
                    JudgeHistory(
                        event=JudgeHistory.Event.RUN_STATUS,
                        run_id=run.id,
                        new_value={"status": JudgeRun.Status.QUEUED},
                    )
                    for run in created
                ],
                batch_size=500,
            )
            out["created"] += len(created)
    # Evaluations were listed first, so their messages are sent (and, FIFO, executed) first.
    send = [r.id for r in created] + resend
    if send:
        transaction.on_commit(lambda: dispatch.send_runs(send, countdown=countdown))
    return out
