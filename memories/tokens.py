"""How many tokens a text is, estimated: the one estimate recall and extraction both use.

Not counted with a model's tokenizer (which differs per model): each CJK character is one
token, and every other run of characters is one token per 4 characters, rounded up.
Tokenizers such as cl100k and o200k give about that for English and slightly less than one
token per Chinese character, so the estimate errs on the safe side.

CJK characters: letters and punctuation as ``core.cjk`` defines them.
"""

from __future__ import annotations

import re

from core.cjk import CJK_LETTERS, CJK_PUNCTUATION

_CJK_CHAR = re.compile(f"[{CJK_LETTERS}{CJK_PUNCTUATION}]")


def estimate_tokens(text: str) -> int:
    """One token per CJK character, one per 4 other characters of each run (see module doc)."""
    runs = _CJK_CHAR.split(text)
    # Split at each CJK character, the text has one run more than it has such characters.
    return sum((len(run) + 3) // 4 for run in runs) + len(runs) - 1
