"""memories.tokens.estimate_tokens: the one estimate recall's budgets and extraction's
windows use."""

from __future__ import annotations

from memories.tokens import estimate_tokens


def test_english_is_a_token_per_four_characters_rounded_up() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("hello world") == 3  # 11 characters
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2


def test_chinese_is_a_token_per_character() -> None:
    assert estimate_tokens("测试") == 2
    assert estimate_tokens("我喜欢用中文写代码") == 9
    assert estimate_tokens("㐀㐁") == 2  # Extension A
    assert estimate_tokens("𠀀𠀁") == 2  # Extension B, outside the basic plane


def test_japanese_and_korean_are_a_token_per_character() -> None:
    assert estimate_tokens("ひらがな") == 4
    assert estimate_tokens("カタカナ") == 4
    assert estimate_tokens("ㇰㇱ") == 2  # Katakana phonetic extensions
    assert estimate_tokens("日本語です。") == 6  # the ideographic full stop too
    assert estimate_tokens("한국어") == 3


def test_full_width_forms_count_as_cjk() -> None:
    assert estimate_tokens("ＡＢＣ！") == 4


def test_mixed_text_counts_each_run() -> None:
    # 4 CJK characters, then " vitest" (7 characters: 2 tokens).
    assert estimate_tokens("我喜欢用 vitest") == 4 + 2
    # "use " (1) + 日本語 (3) + " and " (2) + 한국어 (3) + " ok" (1).
    assert estimate_tokens("use 日本語 and 한국어 ok") == 1 + 3 + 2 + 3 + 1


def test_recall_and_extraction_share_it() -> None:
    from conversations.extraction import runs
    from recall import injection

    assert runs.estimate_tokens is estimate_tokens
    assert injection.estimate_tokens is estimate_tokens
