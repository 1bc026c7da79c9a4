"""Keep Python's cyclic garbage collector off the objects a process loads when it starts.

A web process holds about 230,000 long-lived objects once Django, the apps and their libraries
are loaded. CPython's full collections scan every tracked object, and allocation triggers them:
a request that builds many containers (Decide decodes a domain's stored rows, 5,500 dicts at
50,000 ideas) pays for several full scans of that startup heap, which holds no garbage.
Decoding Decide's 2 MB of rows took 150 ms with them and 15 ms without; the Decide page at 1M
ratings went from 356 to 148 ms (bench/bench_decide_recompute.py). ``gc.freeze()`` moves every
object that exists now to a permanent generation the collector skips; reference counting still
frees them as usual, so only cyclic garbage among them would stay (collected once just
before). Called by ``config/wsgi.py`` once the app and its URLconf are loaded. (The workers'
heavy tasks pause the collector while they run instead: apps/decisions/services.py; a worker
frozen the same way ran the 3x prediction refresh of bench/bench_scale.py no faster.)

The objects a request builds itself are not frozen: Decide's 5,500 rows at 1M ratings, their
copies with P(top N), the cut and the ranks, are some hundred thousand containers, none in a
cycle, and the collections their allocation triggers rescanned them again and again (70 ms of
the page's 290 ms). The views that build a whole domain's board pause the collector while they
run (``cycle_collection_paused``); reference counting frees what they leave as usual.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def freeze_startup_objects() -> None:
    gc.collect()
    gc.freeze()


@contextmanager
def cycle_collection_paused(*, collect_after: bool = False) -> Iterator[None]:
    """The cyclic collector paused, then restored as it was. ``collect_after``: one collection
    at the end, for a long task whose cycles (pandas' frames hold some) a worker should not
    carry into its next task. Paused already (a nested pause, another thread's): left as is.

    That collection is of the youngest generation only: while the collector is paused nothing
    is promoted, so every object the task made, and every cycle among them, is there; a full
    collection also rescanned every object the worker had loaded before (0.19 s after the
    decision recompute at a million ratings, where the youngest took 0.1 ms)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
            if collect_after:
                gc.collect(0)


def without_cycle_collection(view: Callable[P, R]) -> Callable[P, R]:
    """A view that builds a whole board's rows, run with the collector paused (module
    docstring)."""

    @functools.wraps(view)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> R:
        with cycle_collection_paused():
            return view(*args, **kwargs)

    return wrapped
