"""Kinds by definition (docs/MEMORY_KINDS.md), in both languages: the same reading for
extraction's real runs and for the memories page's "Choose for me"."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from memories.models import Memory
from tests.conftest import client_for
from tests.extraction_helpers import extracted

pytestmark = pytest.mark.django_db

BY_DEFINITION = [
    ("Always answer me in short bullet points.", "preference"),
    ("Please keep your answers short and put the code first.", "preference"),
    ("以后你就用简短的中文回答我，有代码的话先给代码、再解释。", "preference"),
    ("我的目标是明年跑完一场全程马拉松。", "goal"),
    ("I'm training for the Cardiff Half on 4 October 2026.", "goal"),
    ("我每周三晚上去游泳。", "pattern"),
    ("I usually go climbing on Sunday mornings.", "pattern"),
    ("Lesson learned: indexes on big tables get created concurrently.", "lesson"),
    ("教训：改字段名要分两步走，先加新字段并双写。", "lesson"),
    ("We decided to drop Python 3.9 support.", "decision"),
    ("I prefer Alembic migrations over hand-written SQL scripts.", "preference"),
    ("我住在上海浦东新区。", "fact"),
    ("My sister Inês is a nurse in Porto.", "fact"),
    ("We'll definitely spend four nights in Kyoto.", "goal"),
    ("入职前我想把 FreeRTOS 过一遍。", "goal"),
    ("I get motion sick on buses.", "fact"),
    ("讲的时候多给例子，少讲理论。", "preference"),
]


@pytest.mark.parametrize(("said", "kind"), BY_DEFINITION)
def test_extraction_gives_the_kind_of_the_definitions(alice: Any, said: str, kind: str) -> None:
    assert [stored_kind for stored_kind, _content in extracted(alice, ("user", said))] == [kind]


@pytest.mark.parametrize(("said", "kind"), BY_DEFINITION)
def test_choose_for_me_gives_the_same_kind(alice: Any, said: str, kind: str) -> None:
    client_for(alice).post(
        reverse("memory-add"),
        {"content": said, "kind": "", "where": "personal", "next": "/settings/memories"},
    )
    assert Memory.objects.get(owner=alice).kind == kind


@pytest.mark.parametrize(
    ("turns", "kept", "never"),
    [
        (
            ["From now on, keep your answers short and put the code first, explanation after."],
            ["answers short", "code first", "explanation after"],
            ["your answers", " me"],
        ),
        (
            [
                "My manager reads the weekly status reports you draft for me, so keep them to "
                "five bullet points and never put emoji in them."
            ],
            ["five bullet points", "emoji in the weekly status reports"],
            ["keep them", "in them", "for me"],
        ),
        (
            [
                "When I ask about my statistics homework, don't hand me the answer. "
                "Give me one hint at a time and let me try first."
            ],
            ["statistics homework", "one hint at a time"],
            ["hand me", "let me"],
        ),
        (
            ["以后你就用简短的中文回答我，有代码的话先给代码、再解释。"],
            ["简短的中文", "先给代码、再解释"],
            ["你", "回答我"],
        ),
        (
            ["你帮我给他们写代码评审意见的时候，语气温和一点。"],
            ["评审意见", "温和"],
            ["他们", "帮我"],
        ),
    ],
)
def test_a_request_about_answers_is_one_preference_in_neutral_words(
    alice: Any, turns: list[str], kept: list[str], never: list[str]
) -> None:
    ((kind, content),) = extracted(alice, *(("user", turn) for turn in turns))
    assert kind == "preference"
    assert all(words in content for words in kept), content
    assert not any(words in content for words in never), content


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("My sister Inês lives in Porto and works as a nurse.", ["Inês", "Porto", "nurse"]),
        (
            "We adopted a retired greyhound called Biscuit. She's terrified of bikes.",
            ["Biscuit is terrified of bikes"],
        ),
        ("我家猫叫年糕，今年12岁了。她有慢性肾病，只能吃处方粮。", ["年糕有慢性肾病", "处方粮"]),
    ],
)
def test_every_clause_is_kept_and_she_names_who_was_named(
    alice: Any, said: str, kept: list[str]
) -> None:
    contents = " | ".join(content for _kind, content in extracted(alice, ("user", said)))
    assert all(words in contents for words in kept), contents
    assert "She" not in contents and "她" not in contents
