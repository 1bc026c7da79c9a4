"""A worker's freed large arrays go back to the system (apps/core/malloc.py): shown in a fresh
interpreter each, with glibc's moving threshold and with the fixed one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# A 20 MB array freed (a moving threshold rises to 20 MB), then 4 MB arrays of which every other
# one is freed: the MB still held over the start.
HOLES = """
import sys
import numpy as np
from apps.core.malloc import fix_mmap_threshold
if sys.argv[1] == "fixed":
    assert fix_mmap_threshold()
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
big = np.ones(20 * 2**20 // 8)
del big
start = rss()
blocks = [np.ones(4 * 2**20 // 8) for _ in range(50)]
kept = blocks[1::2]
del blocks
print(round(rss() - start))
"""


def held_mb(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", HOLES, mode], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_freed_arrays_are_returned_once_the_threshold_is_fixed():
    moving, fixed = held_mb("moving"), held_mb("fixed")
    assert moving >= 180  # the 25 freed blocks stayed with the process
    assert fixed <= 120  # only the 25 kept ones (100 MB) are held


def test_the_worker_fixes_it_before_its_pool_starts():
    from celery.signals import worker_init

    from config.celery import return_freed_blocks

    # Connected strongly (weak=False): the receiver itself is kept, not a reference to it.
    assert return_freed_blocks in [receiver for _, receiver in worker_init.receivers]
