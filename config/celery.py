import os

from celery import Celery
from celery.signals import beat_init, worker_init
from celery.worker.consumer import Consumer

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")


class BrokerRestartSafeConsumer(Consumer):
    """The worker's consumer, surviving a broker restart while it holds delayed tasks.

    Celery 5.7.0 (with kombu 5.7.0) handles a lost connection by calling `connection.collect()`,
    which drops the transport's client but keeps the default channel, and then
    `connection.close()`, which closes that channel again: the channel restores its unacked
    messages (every countdown/eta task the worker holds), builds a Redis pool from the dropped
    client, and raises `AttributeError: 'NoneType' object has no attribute 'hostname'`. That is
    not a connection error, so the worker stops (issue 21). Forgetting the channel once it has
    been collected avoids the second close. Nothing is lost by it: the broker is down at that
    moment, so the restore could not reach it; the messages stay in Redis's unacked set (restored
    after the visibility timeout when Redis kept its data) and the snapshots and runs they were
    for are sent again by the beat jobs (`disagreement-resend`, `judges-reclaim`).
    Remove when a Celery release no longer closes a collected channel (test:
    tests/core/test_broker_restart.py).
    """

    def on_connection_error_after_connected(self, exc):
        connection = self.connection
        if connection is not None:
            collect = connection.collect

            def collect_and_forget_channel(*args, **kwargs):
                try:
                    return collect(*args, **kwargs)
                finally:
                    connection._default_channel = None

            connection.collect = collect_and_forget_channel
        super().on_connection_error_after_connected(exc)


app = Celery("pluralist")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.worker_consumer = "config.celery:BrokerRestartSafeConsumer"
app.autodiscover_tasks()


def lower_priority(**_: object) -> None:
    """Run this worker (or beat) at WORKER_NICENESS (10 by default): on a host shared with the web
    server, the kernel then gives the web's processes the CPU first and the worker the rest, so
    judge runs and recomputes a burst of submits triggers cannot slow the submits themselves
    (bench/bench_load.py --beside, docs/operations.md). Sent before the pool forks, so the pool's
    processes inherit it. Only ever raises the niceness, which needs no privilege; 0 keeps it.
    With WORKER_SCHED_IDLE (the default) the worker also moves to Linux's idle scheduling class,
    which needs no privilege either; elsewhere that step is skipped."""
    from django.conf import settings

    wanted = int(getattr(settings, "WORKER_NICENESS", 0) or 0)
    current = os.getpriority(os.PRIO_PROCESS, 0)
    if wanted > current:
        os.setpriority(os.PRIO_PROCESS, 0, min(wanted, 19))
    if getattr(settings, "WORKER_SCHED_IDLE", False) and hasattr(os, "SCHED_IDLE"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except OSError:  # a sandbox that forbids it: the niceness still applies
            pass


def return_freed_blocks(**_: object) -> None:
    """A worker gives its freed large arrays back to the system (apps/core/malloc.py). Before
    the pool forks, so its processes inherit it."""
    from apps.core.malloc import fix_mmap_threshold

    fix_mmap_threshold()


worker_init.connect(lower_priority, weak=False)
worker_init.connect(return_freed_blocks, weak=False)
beat_init.connect(lower_priority, weak=False)
