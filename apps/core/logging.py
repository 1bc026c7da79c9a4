"""Logging filters (wired in config/settings/base.py, LOGGING)."""

from __future__ import annotations

import logging


class ClientErrorsInOneLine(logging.Filter):
    """Drop the traceback from django.request's 4xx records (403 Forbidden, 404, 405 ...).

    Django logs a refused request at WARNING with the PermissionDenied it caught attached, so
    every 403 wrote 20 lines of traceback. A 4xx is the client's mistake or an attempt, not a
    bug: one line (method, path, status) says all an operator needs. 5xx keep their traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", 500) < 500:
            record.exc_info = None
            record.exc_text = None
        return True
