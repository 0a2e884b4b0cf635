"""What counts as CJK text: one definition for search, token estimates and extraction.

CJK letters: the Unified Ideographs with Extension A and the supplementary-plane extensions
(B onwards), the compatibility ideographs, Hiragana and Katakana (with their phonetic
extensions), Bopomofo, and Hangul (syllables and jamo). CJK punctuation (the CJK symbols and
punctuation block, and the full-width and half-width forms) is not a letter, but a model's
tokenizer counts it as a CJK character does (``memories.tokens``).
"""

from __future__ import annotations

import re

CJK_LETTERS = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3100-\u312f"  # Bopomofo
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK Unified Ideographs Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0003134f"  # CJK Unified Ideographs Extensions B to G
)
CJK_PUNCTUATION = (
    "\u3000-\u303f"  # CJK symbols and punctuation
    "\uff00-\uffef"  # Half-width and full-width forms
)
CJK_LETTER = re.compile(f"[{CJK_LETTERS}]")
_CJK_RUN = re.compile(f"[{CJK_LETTERS}]+")


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds any CJK letter."""
    return CJK_LETTER.search(text) is not None


def is_cjk(token: str) -> bool:
    """Whether ``token`` is made of CJK letters only."""
    return _CJK_RUN.fullmatch(token) is not None
