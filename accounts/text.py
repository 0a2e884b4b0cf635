"""What text the app accepts: no NUL (PostgreSQL cannot store it) nor other control characters.

Tab, line feed and carriage return are ordinary text. Lone UTF-16 surrogates (which
JSON can spell as ``\\ud800``) cannot be encoded as UTF-8, so they are refused too. The
API (api.middleware, and the MCP tools' arguments), the forms (``TextField``) and imported
files all use this rule; the memory proxy drops them from what it stores.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import ProhibitNullCharactersValidator
from django.utils.translation import gettext_lazy as _

CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
CONTROL_CHARACTERS_MESSAGE = _("control characters (such as NUL) are not allowed.")


def has_control_characters(text: str) -> bool:
    return CONTROL_CHARACTERS.search(text) is not None


def without_control_characters(text: str) -> str:
    """``text`` with its control characters dropped: for text taken as it comes rather than
    refused (the chats the memory proxy passes on, whose turns it stores)."""
    return CONTROL_CHARACTERS.sub("", text)


def validate_plain_text(value: Any) -> None:
    if isinstance(value, str) and has_control_characters(value):
        raise ValidationError(
            _("Remove the control characters (such as NUL): they are not allowed."),
            code="control_characters",
        )


class TextField(forms.CharField):
    """A CharField refusing every control character, not just NUL, with one message."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.validators = [
            validator
            for validator in self.validators
            if not isinstance(validator, ProhibitNullCharactersValidator)
        ]
        self.validators.append(validate_plain_text)
