"""How many tokens a text is, estimated: the one estimate recall and extraction both use.

Not counted with a model's tokenizer (which differs per model): each CJK character is one
token, and every other run of characters is one token per 4 characters, rounded up.
Tokenizers such as cl100k and o200k give about that for English and slightly less than one
token per Chinese character, so the estimate errs on the safe side.

CJK here: CJK Unified Ideographs with Extension A and the supplementary-plane extensions
(B onwards), compatibility ideographs, CJK symbols and punctuation, Hiragana and Katakana
(with their phonetic extensions), Bopomofo, Hangul syllables and jamo, and the full-width
and half-width forms (full-width letters and punctuation in CJK text).
"""

from __future__ import annotations

import re

CJK_RANGES = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3000-\u303f"  # CJK symbols and punctuation
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3100-\u312f"  # Bopomofo
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK Unified Ideographs Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff00-\uffef"  # Half-width and full-width forms
    "\U00020000-\U0003134f"  # CJK Unified Ideographs Extensions B to G
)
_CJK_CHAR = re.compile(f"[{CJK_RANGES}]")


def estimate_tokens(text: str) -> int:
    """One token per CJK character, one per 4 other characters of each run (see module doc)."""
    runs = _CJK_CHAR.split(text)
    # Split at each CJK character, the text has one run more than it has such characters.
    return sum((len(run) + 3) // 4 for run in runs) + len(runs) - 1
