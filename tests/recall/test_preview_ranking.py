"""The preview's ranking on what a question asks: names are not words, times are ranges, a
turn comes with the turn that answers it, and the block fills its budget and stops there."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memories import services
from memories.tokens import estimate_tokens
from recall.injection import PreviewRequest, injection_preview
from tests.recall.test_episodes import chat, episode_ids

pytestmark = pytest.mark.django_db


def preview(user, message, **fields):
    return injection_preview(user, PreviewRequest(message=message, dry_run=True, **fields))


def test_a_name_only_match_never_outranks_a_content_match(alice):
    """The people of past conversations are named in every line they said or were greeted
    with: a line sharing only the name with the question is not found at all."""
    _conversation, (greeting, support, reaction) = chat(
        alice,
        ("assistant", "Hi Mia! How have you been, Mia?"),
        ("user", "I went to an LGBTQ support group yesterday and it helped a lot"),
        ("assistant", "Glad you agree, Mia."),
    )
    services.memory_create(owner=alice, content="Mia likes Mia's new haircut", actor=alice)

    result = preview(alice, "When did Mia go to the LGBTQ support group?")

    found = episode_ids(result)
    assert support.pk in found
    assert greeting.pk not in found and reaction.pk not in found
    assert "haircut" not in result["block"]
    ranked = sorted(
        [*result["memories"], *result["episodes"]], key=lambda item: -float(item["score"])
    )
    assert ranked[0]["id"] == support.pk


def test_a_question_about_a_time_favours_what_was_said_then(alice):
    may = datetime(2024, 5, 14, 9, tzinfo=UTC)
    june = datetime(2024, 6, 20, 9, tzinfo=UTC)
    _c, (in_may,) = chat(
        alice, ("user", "Pottery class was fun tonight"), external_id="m", sent_at=may
    )
    _c, (in_june,) = chat(
        alice, ("user", "Pottery class was fun again tonight"), external_id="j", sent_at=june
    )
    now = datetime(2024, 7, 1, tzinfo=UTC)

    asked = preview(alice, "Pottery class in May 2024?", as_of=now)["episodes"]
    scores = {episode["message_id"]: episode for episode in asked}
    assert scores[in_may.pk]["score"] > scores[in_june.pk]["score"]
    assert scores[in_may.pk]["score_parts"]["dated"] == 1.0
    assert scores[in_june.pk]["score_parts"]["dated"] == 0.0


def test_the_turn_that_answers_a_matched_question_comes_with_it(alice):
    """ "Yes, last week!" means nothing alone: found by the question it answers, it is shown."""
    _conversation, (question, answer) = chat(
        alice,
        ("assistant", "Did you finally book the flight to Lisbon?"),
        ("user", "Yes, last week!"),
    )

    episode = preview(alice, "flight to Lisbon")["episodes"][0]

    assert episode["message_id"] == question.pk
    assert episode["answered_by"]["message_id"] == answer.pk
    assert episode["message_ids"] == [question.pk, answer.pk]


def test_the_block_fills_its_budget_and_stops_there(alice):
    chat(
        alice,
        *[
            ("user" if n % 2 else "assistant", f"The lighthouse keeper story, part {n}")
            for n in range(1, 41)
        ],
    )

    everything = preview(alice, "lighthouse keeper story", budget=100_000)
    assert len(everything["episodes"]) >= 8
    budget = everything["tokens"]["total"] // 2

    half = preview(alice, "lighthouse keeper story", budget=budget)

    assert estimate_tokens(half["block"]) == half["tokens"]["total"] <= budget
    # Full: what was left out would not have fitted, or was shown with another.
    largest = max(episode["tokens"] for episode in everything["episodes"])
    assert half["tokens"]["total"] > budget - largest - 10
    left_out = {d["reason"] for d in half["dropped"] if d["source"] == "episode"}
    assert left_out <= {"total_budget", "shown_with_another"} and "total_budget" in left_out


def test_a_memory_is_kept_over_the_turn_it_came_from_whose_neighbours_stay(alice):
    _conversation, (question, answer) = chat(
        alice,
        ("assistant", "Where is the wedding?"),
        ("user", "At the Lakeside Inn, on 12 June"),
    )
    memory = services.memory_create(
        owner=alice,
        content="Mia's wedding is at the Lakeside Inn on 12 June 2025",
        evidence=[{"messages": [answer.pk]}],
        actor=alice,
    )

    result = preview(alice, "wedding Lakeside Inn")

    assert [m["id"] for m in result["memories"]] == [memory.pk]
    assert answer.pk not in {m for e in result["episodes"] for m in e["message_ids"]}
    assert "At the Lakeside Inn, on 12 June" not in result["block"]
    assert question.pk in episode_ids(result) or any(
        d["id"] == answer.pk and d["reason"] == "covered_by_memory" for d in result["dropped"]
    )
