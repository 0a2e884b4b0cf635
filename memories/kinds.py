"""What kind a memory added by hand is, when its author lets the app choose.

Extraction reads kinds out of sentences ("I prefer…" is a preference); a memory
typed into "Add a memory" with "Choose for me" gets its kind the same way. The
reading lives with extraction, which memories may not import, so extraction
registers it here when the app starts (``conversations.apps``), as it registers
its embedded tables.
"""

from __future__ import annotations

from collections.abc import Callable

from memories.models import Kind

# A sentence → the kind it states, or None when it says nothing recognisable.
KindGuesser = Callable[[str], str | None]
# A sentence → (subject, value) as extraction reads them (``duplicates.attribute_of``).
StatementReader = Callable[[str], tuple[str, str]]

_guessers: list[KindGuesser] = []
_readers: list[StatementReader] = []


def register_statement_reader(reader: StatementReader) -> None:
    if reader not in _readers:
        _readers.append(reader)


def read_statement(content: str) -> tuple[str, str]:
    """What ``content`` is about and what it says of it, as extraction would read them;
    ("", "") when no reader recognises it."""
    for reader in _readers:
        subject, value = reader(content)
        if subject and value:
            return subject, value
    return "", ""


def register_kind_guesser(guesser: KindGuesser) -> None:
    if guesser not in _guessers:
        _guessers.append(guesser)


def guess_kind(content: str) -> str:
    """The kind the registered readers find in ``content``; a fact when none does."""
    for guesser in _guessers:
        kind = guesser(content)
        if kind in Kind.values:
            return str(kind)
    return Kind.FACT
