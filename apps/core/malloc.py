"""Freed large blocks go back to the operating system, in the workers.

glibc's malloc serves a block above its mmap threshold (128 KiB at start) from a mapping of its
own, unmapped when freed; but each such free raises the threshold to the freed block's size (up
to 32 MiB on 64-bit), and from then on blocks under it come from the heap, where freed memory
mostly stays with the process. The heavy tasks allocate and drop numpy arrays of tens of MB
(the alignment's frames, bootstrap blocks, reasons' vectors): the overall alignment scope at 1M
ratings held 1,800 MB at its peak with the moving threshold and 1,740 MB with a fixed one, and
250 MB less between its phases (bench/bench_scale.py; docs/operations.md). Setting the threshold
explicitly turns the moving one off (mallopt(3)). Where there is no glibc, nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_MMAP_THRESHOLD = -3  # glibc's <malloc.h>
MMAP_THRESHOLD = 128 * 1024  # glibc's starting value


def fix_mmap_threshold(size: int = MMAP_THRESHOLD) -> bool:
    """Blocks of `size` bytes or more mapped on their own from now on; True where it applied."""
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, size))
