"""What every API request schema shares: the date-time type, and strict bodies."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, WithJsonSchema

# PostgreSQL stores offsets up to 15:59 either way.
MAX_OFFSET = timedelta(hours=16)
_NUMBER = re.compile(r"\s*[+-]?\d+(\.\d*)?\s*")


def _iso_text(value: Any) -> Any:
    """Only ISO 8601 text: a number (say -1) is not a moment, though pydantic would read
    it as seconds since 1970."""
    if isinstance(value, int | float) or (isinstance(value, str) and _NUMBER.fullmatch(value)):
        raise ValueError("use an ISO 8601 date-time, e.g. 2025-01-31T09:30:00Z")
    return value


def _storable(value: datetime) -> datetime:
    offset = value.utcoffset()
    if offset is not None and abs(offset) >= MAX_OFFSET:
        raise ValueError("the time zone offset must be less than 16 hours either way")
    try:
        if offset is not None:
            value.astimezone(UTC)
    except OverflowError:
        raise ValueError("the date is out of range") from None
    return value


ApiDateTime = Annotated[
    datetime,
    BeforeValidator(_iso_text),
    AfterValidator(_storable),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
