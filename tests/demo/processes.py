"""Helpers for tests that run bin/demo or manage.py as real processes."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(
    condition: Callable[[], object], timeout: float, what: str, log: Path | None = None
) -> None:
    """Poll every half second; on time-out fail naming `what`, with the tail of `log` if given."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    tail = f"\n{log.read_text()[-3000:]}" if log is not None else ""
    raise AssertionError(f"timed out waiting for {what}{tail}")
