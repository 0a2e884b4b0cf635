"""Filters of the web log (config.settings.LOGGING)."""

from __future__ import annotations

import logging


class RefusalsInOneLine(logging.Filter):
    """A refused request (a 4xx) is one line in the log: Django logs "Forbidden (Permission
    denied)" and the like with the exception's whole traceback, a page of log per refusal.
    Server errors (5xx) keep theirs."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
