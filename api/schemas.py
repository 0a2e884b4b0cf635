"""What every API request schema shares: strict bodies, the date-time and tag types."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from ninja import Schema
from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StringConstraints,
    WithJsonSchema,
)

__all__ = ["MAX_TAG_LENGTH", "ApiDateTime", "InSchema", "StrictBool", "Tag"]

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


class InSchema(Schema):
    """A request body: a field the API does not know is refused, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


MAX_TAG_LENGTH = 50
Tag = Annotated[
    str,
    StringConstraints(max_length=MAX_TAG_LENGTH),
    Field(description=f"At most {MAX_TAG_LENGTH} characters; stored trimmed and lower-cased."),
]
