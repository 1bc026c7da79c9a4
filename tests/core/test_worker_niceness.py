"""The worker (and its pool's processes) run at WORKER_NICENESS, so on a host shared with the web
server the web gets the CPU first (issue 29: submit p95 155-397 ms with a busy worker beside it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.workers import CeleryWorker, wait_for

pytestmark = [pytest.mark.worker]


def _niceness(pid: int) -> int:
    # /proc/PID/stat: the 19th field is the niceness; the command name (2nd) may hold spaces.
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[16])


def _policy(pid: int) -> int:
    # /proc/PID/stat: the 41st field is the scheduling policy (5 is SCHED_IDLE).
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[38])


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


@pytest.mark.django_db(transaction=True)
def test_the_worker_and_its_pool_processes_run_at_the_configured_niceness():
    # Only ever raised: a test run that is itself niced more keeps its own niceness.
    expected = max(7, os.getpriority(os.PRIO_PROCESS, 0))
    worker = CeleryWorker(extra_env={"WORKER_NICENESS": "7"}, pool="prefork").start()
    try:
        assert worker.process is not None
        wait_for(lambda: _children(worker.process.pid), message="no pool process")
        children = _children(worker.process.pid)
        assert _niceness(worker.process.pid) == expected
        assert [_niceness(c) for c in children] == [expected] * len(children)
        # The test settings leave the normal scheduling class (their workers share the cores
        # with the test process and its browsers).
        assert _policy(worker.process.pid) == os.SCHED_OTHER
    finally:
        worker.stop()


@pytest.mark.django_db(transaction=True)
def test_with_sched_idle_the_worker_and_its_pool_processes_run_in_the_idle_class():
    worker = CeleryWorker(extra_env={"WORKER_SCHED_IDLE": "1"}, pool="prefork").start()
    try:
        assert worker.process is not None
        wait_for(lambda: _children(worker.process.pid), message="no pool process")
        pids = [worker.process.pid, *_children(worker.process.pid)]
        assert [_policy(pid) for pid in pids] == [os.SCHED_IDLE] * len(pids)
    finally:
        worker.stop()
