"""The gate on what becomes a memory (memories.gate), through real runs, in both languages:
talk, questions, hypotheticals, shared pictures and one-off problems are not stored; the
lesson learned from a problem is."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conversations.extraction.llm import LlmExtractor
from memories.gate import (
    REASON_FRAGMENT,
    REASON_HYPOTHETICAL,
    REASON_MEDIA,
    REASON_ONE_OFF_PROBLEM,
    REASON_QUESTION,
    REASON_SMALL_TALK,
    REASON_TASK,
    rejection,
)
from tests.extraction_helpers import extracted

NOTHING_TO_KEEP = [
    "Glad you agree, Caroline.",
    "That's class, Jess",
    "Finished",
    "[shares a photo: a sunset over the harbour]",
    "Haha, the semicolon joke got me. Thanks for all the help today!",
    "What's the actual difference between a mutex and a semaphore?",
    "If I ever moved to Japan, would I need Japanese to get a job in Tokyo?",
    "The Docker build failed again with a network timeout.",
    "Last night's deploy took checkout down for 40 minutes.",
    "早上好！今天又下雨了，外卖晚了半小时，哈哈。",
    "要是我哪天辞职去大理开个民宿，你觉得一年能回本吗？",
    "问一下，TCP 建立连接为什么是三次握手？",
    "昨天数学模考只考了92分，最后两道大题都没写完。",
    "去年基金一大跌，结果后面又涨回来，亏了小两万。",
    "Help me write a short CONTRIBUTING section for the repo.",
    "Scratch the Kindle bit, though.",
    "帮我列个待产包清单。",
    "帮我把下面这段改写一下。",
    # Questions without their mark, guesses, fragments on a pronoun, wishes mid-sentence.
    "33朵的会不会太贵了",
    "假装第一次听说，演技如何",
    "2024年6月10日应该稳了吧",
    "I've had them.",
    "居然忘了，生日快乐！",
    "有，学校VPN一直连不上，在宿舍下不了知网的文献。",
    "最后一晚电脑蓝屏，代码没备份，论文没交上。",
    "I'll think about it.",
    "我再想想。",
    "有时候我也会想，如果哪天开第二家店，我想开在高新区。",
]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("said", "kept"),
    [
        # Laughter after a statement does not make it small talk.
        ("上海菜偏甜，不辣，对我的胃简直太友好了哈哈", "上海菜偏甜"),
        # 推迟到 is a new date, not 迟到 (late).
        ("陈总决定星图上线推迟到2026年6月10日。", "推迟到2026年6月10日"),
    ],
)
def test_a_statement_is_kept_whatever_follows_it(alice: Any, said: str, kept: str) -> None:
    stored = extracted(alice, ("user", said))
    assert any(kept in content for _kind, content in stored), stored
    assert not any("哈哈" in content for _kind, content in stored)


@pytest.mark.django_db
@pytest.mark.parametrize("text", NOTHING_TO_KEEP)
def test_talk_and_one_off_problems_are_not_stored(alice: Any, text: str) -> None:
    assert extracted(alice, ("user", text)) == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("problem", "lesson", "kept"),
    [
        (
            "Last night's deploy took checkout down for 40 minutes.",
            "Lesson learned: indexes on big tables get created concurrently.",
            "CONCURRENTLY",
        ),
        (
            "上周五上线出了事故，报错了整整一个小时。",
            "教训：改字段名要分两步走，先加新字段并双写。",
            "两步",
        ),
    ],
)
def test_the_lesson_is_kept_and_the_failure_is_not(
    alice: Any, problem: str, lesson: str, kept: str
) -> None:
    stored = extracted(alice, ("user", problem), ("user", lesson))
    assert [kind for kind, _content in stored] == ["lesson"]
    assert kept.casefold() in stored[0][1].casefold()


@pytest.mark.parametrize(
    ("kind", "content", "reason"),
    [
        ("fact", "Glad you agree, Caroline.", REASON_SMALL_TALK),
        ("fact", "Finished", REASON_SMALL_TALK),
        ("fact", "Tuesday", REASON_FRAGMENT),
        ("fact", "[shares a photo: a dog]", REASON_MEDIA),
        ("fact", "Would Japanese be needed?", REASON_QUESTION),
        ("fact", "如果辞职去大理开民宿", REASON_HYPOTHETICAL),
        ("fact", "The Docker build failed again with a network timeout.", REASON_ONE_OFF_PROBLEM),
        ("lesson", "The build fails without the cache; always pin the base image", ""),
        ("fact", "帮我列个待产包清单。", REASON_TASK),
        ("fact", "Is vegetarian", ""),
        ("fact", "住在深圳", ""),
    ],
)
def test_the_gate_says_why(kind: str, content: str, reason: str) -> None:
    assert rejection(kind, content) == reason


@pytest.mark.django_db
def test_the_llm_extractors_answer_passes_the_same_gate(
    alice: Any, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    answer = [
        {"kind": "fact", "content": "The Docker build failed again with a network timeout."},
        {"kind": "fact", "content": "Glad you agree, Caroline."},
        {"kind": "lesson", "content": "Pin the base image so builds do not need the network."},
    ]
    monkeypatch.setattr(LlmExtractor, "_complete", lambda self, prompt: json.dumps(answer))
    settings.EXTRACTION_LLM_URL = "http://llm.invalid/v1"
    said = "The Docker build failed again. Lesson: pin the image."
    stored = extracted(alice, ("user", said), extractor="llm")
    assert stored == [("lesson", "Pin the base image so builds do not need the network.")]
