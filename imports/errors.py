"""Why a file is refused or an import stopped: a stable code (the API's), put into words.

An import records the code and its details; the words are made when shown, in the
reader's language (the page's), or in English (the API).
"""

from __future__ import annotations

from typing import Any

from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _

from imports.models import Source


class ImportRefused(Exception):
    """The file cannot be imported; nothing was written."""

    def __init__(self, code: str, **details: Any):
        super().__init__(code)
        self.code = code
        self.details = details


# Codes, in the order a file meets them.
FILE_TOO_LARGE = "FILE_TOO_LARGE"
UNSAFE_ZIP = "UNSAFE_ZIP"
UNKNOWN_FORMAT = "UNKNOWN_FORMAT"
WRONG_SERVICE = "WRONG_SERVICE"
MALFORMED_FILE = "MALFORMED_FILE"
EMPTY_EXPORT = "EMPTY_EXPORT"
# The file was fine; the import stopped after repeated errors (resume or undo it).
IMPORT_FAILED = "IMPORT_FAILED"
CODES = (
    FILE_TOO_LARGE,
    UNSAFE_ZIP,
    UNKNOWN_FORMAT,
    WRONG_SERVICE,
    MALFORMED_FILE,
    EMPTY_EXPORT,
    IMPORT_FAILED,
)


def expected(source: str) -> str:
    """What a file of ``source`` should be, as the page asks for it."""
    if source == Source.CHATGPT:
        return _(
            "ChatGPT's data export: the .zip from Settings → Data controls → Export data, "
            "or the conversations.json inside it"
        )
    if source == Source.CLAUDE:
        return _(
            "Claude's data export: the .zip from Settings → Privacy → Export data, "
            "or the conversations.json inside it"
        )
    return _("saved memories as text: one memory per line or bullet (.txt or .md), or pasted")


def _found(found: str) -> str:
    if found == Source.CHATGPT:
        return _("a ChatGPT export")
    if found == Source.CLAUDE:
        return _("a Claude export")
    return _("a conversations export (zip or JSON)")


def message(source: str, code: str, details: dict[str, Any]) -> str:
    """The sentence saying why (``code``, ``details`` as an ImportRefused has them)."""
    wanted = expected(source)
    if code == FILE_TOO_LARGE:
        return _("The file is larger than %(limit)s, the most this server accepts.") % {
            "limit": filesizeformat(details.get("limit", 0))
        }
    if code == UNSAFE_ZIP:
        return _("The zip cannot be opened safely (%(reason)s). Expected %(expected)s.") % {
            "reason": _reason(details),
            "expected": wanted,
        }
    if code == WRONG_SERVICE:
        return _("This is %(found)s, not what was chosen. Expected %(expected)s.") % {
            "found": _found(details.get("found", "")),
            "expected": wanted,
        }
    if code == MALFORMED_FILE:
        return _(
            "The file is damaged or incomplete (%(reason)s); nothing was imported. "
            "Expected %(expected)s."
        ) % {"reason": _reason(details), "expected": wanted}
    if code == EMPTY_EXPORT:
        if source == Source.MEMORIES:
            return _("No memories were found in this text. Expected %(expected)s.") % {
                "expected": wanted
            }
        return _("This export holds no conversation with text to import.")
    if code == IMPORT_FAILED:
        return _(
            "The import stopped after repeated errors (%(error)s). What was stored is kept: "
            "try again, or undo the import."
        ) % {"error": details.get("error", "")}
    return _("This file cannot be read. Expected %(expected)s.") % {"expected": wanted}


def _reason(details: dict[str, Any]) -> str:
    """What exactly is wrong with a zip or a JSON file (``details["reason"]``)."""
    reason = details.get("reason", "")
    if reason == "json":
        return _("it stops being valid JSON after %(count)s conversations") % {
            "count": details.get("after", 0)
        }
    if reason == "not_a_conversation":
        return _("item %(number)s of the list is not a conversation") % {
            "number": details.get("number", 0)
        }
    reasons = {
        "no_conversations": _("it holds no conversations.json"),
        "several_conversations": _("it holds more than one conversations.json"),
        "encrypted": _("it is protected by a password"),
        "ratio": _("it would inflate far beyond its size, as a zip bomb does"),
        "too_large": _("what it holds is too large once inflated"),
        "path": _("a file in it has a name that points outside the zip"),
        "too_many_files": _("it holds too many files"),
        "damaged": _("it is damaged"),
        "not_a_list": _("it is JSON, but not a list of conversations"),
        "not_text": _("it is not UTF-8 text"),
    }
    return str(reasons.get(reason, reason))


class ImportNotAllowed(Exception):
    """What was asked cannot be done to the import now; nothing changed."""

    def __init__(self, code: str):
        super().__init__(code)
        self.code = code


# Codes of ImportNotAllowed.
BUSY = "busy"
NOT_READY = "not_ready"
NOTHING_CHOSEN = "nothing_chosen"
MEMORY_OFF = "memory_off"
MEMORY_PAUSED = "memory_paused"
NOT_UNDOABLE = "not_undoable"
NOT_DISCARDABLE = "not_discardable"
NOT_RESUMABLE = "not_resumable"


def refusal(code: str) -> str:
    """Why ``ImportNotAllowed(code)`` refused."""
    refusals = {
        BUSY: _("Another import is still running; wait for it to finish (or undo it) first."),
        NOT_READY: _("This import is not waiting for your choice any more."),
        NOTHING_CHOSEN: _(
            "Choose at least one: keep the conversations, or build memories from them."
        ),
        MEMORY_OFF: _(
            "Memory is off, so no memories can be built. Turn it on in Memory settings, "
            "or import the conversations only."
        ),
        MEMORY_PAUSED: _(
            "Memory is paused, so no memories can be built now. Resume it, or import the "
            "conversations only."
        ),
        NOT_UNDOABLE: _(
            "This import cannot be undone: it was undone already, or never wrote anything."
        ),
        NOT_DISCARDABLE: _("This import has written data: undo it instead."),
        NOT_RESUMABLE: _("Only an import stopped by an error can be tried again."),
    }
    return str(refusals.get(code, code))
