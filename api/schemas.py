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

__all__ = [
    "MAX_TAG_LENGTH",
    "ApiDateTime",
    "Fraction",
    "InSchema",
    "JsonInt",
    "StrictBool",
    "Tag",
    "document_plain_text",
]

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


def _json_number(value: Any) -> Any:
    """A number as JSON writes it: true, false or a numeral in a string is not one (pydantic
    would read false as 0)."""
    if isinstance(value, bool | str):
        raise ValueError("must be a number")
    return value


# A request body's numbers: a score, confidence or importance from 0 to 1, and a count.
Fraction = Annotated[float, Field(ge=0, le=1), BeforeValidator(_json_number)]
JsonInt = Annotated[int, BeforeValidator(_json_number)]

# Every string the API takes or gives is without control characters (api.middleware refuses
# them, accounts.text says which): the OpenAPI document says so of each string.
PLAIN_TEXT_PATTERN = "^[^\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]*$"


def document_plain_text(node: Any) -> None:
    """Give every string schema in ``node`` (an OpenAPI document, or part) without a pattern,
    format or fixed values the control-character rule's pattern."""
    if isinstance(node, dict):
        if node.get("type") == "string" and not {"pattern", "format", "enum", "const"} & set(node):
            node["pattern"] = PLAIN_TEXT_PATTERN
        for value in node.values():
            document_plain_text(value)
    elif isinstance(node, list):
        for value in node:
            document_plain_text(value)


class InSchema(Schema):
    """A request body: a field the API does not know is refused, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


MAX_TAG_LENGTH = 50
Tag = Annotated[
    str,
    StringConstraints(max_length=MAX_TAG_LENGTH),
    Field(description=f"At most {MAX_TAG_LENGTH} characters; stored trimmed and lower-cased."),
]
