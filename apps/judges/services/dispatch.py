"""The only module of the judges that sends Celery messages (the alignment snapshots excepted:
their kind, `services.alignment.ALIGNMENT`, sends them like every snapshot, apps/core/snapshots.py).

Tasks are sent by name (`app.send_task`), so this module needs no import of apps.judges.tasks
(which imports the services): no import cycle, and no function-level import to hide one. The
routing is the app's (CELERY_TASK_ROUTES: "judges.*" go to the "judges" queue) unless a queue is
named. Every caller sends after commit (transaction.on_commit), so a worker never looks for a
row that is not committed yet.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from celery import current_app
from kombu.exceptions import ChannelError

log = logging.getLogger(__name__)

RUN_EXECUTE = "judges.judge_run_execute"
RUN_CHUNK = "judges.judge_run_chunk"
RUNS_SCHEDULE = "judges.judge_runs_schedule"
RUNS_RECLAIM = "judges.judge_runs_reclaim"
ALIGNMENT_SNAPSHOT = "judges.alignment_snapshot_compute"
ITEM_PARTS_MEASURE = "judges.item_parts_measure"


def send_run(run_id: int, *, countdown: float = 0) -> None:
    """Start (or resume) one run. Raises when the broker is unreachable."""
    current_app.send_task(RUN_EXECUTE, args=(run_id,), countdown=countdown or None)


def send_runs(run_ids: Sequence[int], *, countdown: float = 0) -> int:
    """Send several runs in order; stops at the first broker failure (the runs left queued are
    sent again by the reclaim job). Returns how many were sent."""
    for sent, run_id in enumerate(run_ids):
        try:
            send_run(run_id, countdown=countdown)
        except Exception:  # kombu raises several types for an unreachable broker
            log.exception("could not enqueue judge run %s", run_id)
            return sent
    return len(run_ids)


def send_chunks(run_id: int, indexes: Sequence[int]) -> None:
    """Let other workers help with these chunks of a run (LLM runs: one call per target)."""
    for index in indexes:
        try:
            current_app.send_task(RUN_CHUNK, args=(run_id, index))
        except Exception:
            # The worker that planned the run works through every chunk it can claim anyway.
            log.exception("could not enqueue chunk %s of judge run %s", index, run_id)
            return


def send_schedule(reviewer_ids: Sequence[int], *, countdown: float, changed_at: datetime) -> bool:
    """Ask a worker to decide the automatic runs of these reviewers. Returns False (logged) when
    the broker is unreachable: the ratings are saved, and the reclaim job sends it again."""
    try:
        # Scheduling takes seconds, not minutes: the default queue (an explicit queue wins over
        # the "judges.*" route), so new runs are queued without waiting behind a long judge run.
        current_app.send_task(
            RUNS_SCHEDULE,
            kwargs={
                "reviewer_ids": list(reviewer_ids),
                "countdown": countdown,
                "changed_at": changed_at.isoformat(),
            },
            countdown=countdown or None,
            queue=current_app.conf.task_default_queue,
        )
    except Exception:
        log.exception("could not enqueue judge scheduling for %s reviewers", len(reviewer_ids))
        return False
    return True


def send_item_parts_measure() -> None:
    """Measure every domain's item text parts again (after a restore, which does not carry the
    choice). Raises when the broker is unreachable."""
    current_app.send_task(ITEM_PARTS_MEASURE, queue=current_app.conf.task_default_queue)


def runs_waiting_in_broker() -> int | None:
    """How many messages wait in the judge runs' queue on the broker (not those a worker holds);
    None when the broker cannot be asked. The reclaim reads it to tell a run whose message waits
    its turn behind other runs (a backlog: nothing to do) from one whose message is gone (the
    queue is empty, yet the run was never taken: Redis lost it, or a worker dropped it)."""
    queue = current_app.amqp.router.route({}, RUN_EXECUTE)["queue"].name
    try:
        with current_app.connection_for_read() as conn:
            return int(conn.default_channel.queue_declare(queue=queue, passive=True).message_count)
    except ChannelError:
        return 0  # Redis drops an empty list: no queue means no message waiting
    except Exception:  # kombu raises several types for an unreachable broker
        log.warning("could not count the messages waiting in %s", queue, exc_info=True)
        return None
