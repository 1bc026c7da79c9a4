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
"""

from __future__ import annotations

import gc


def freeze_startup_objects() -> None:
    gc.collect()
    gc.freeze()
