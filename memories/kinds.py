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

_guessers: list[KindGuesser] = []


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
