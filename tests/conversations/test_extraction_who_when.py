"""Who said it and when, through real runs: participants name other people, a memory is valid
from its message's sent_at, relative dates are read against it, and the later statement
supersedes the earlier whatever order they arrive in."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
from django_q.conf import Conf
from django_q.models import OrmQ

from conversations.extraction.runs import EXTRACT_TASK, execute_run
from conversations.models import Conversation, ExtractionRun, Message
from memories.models import Memory
from tests.extraction_helpers import api_client, post_json

BASE = "/api/v1/conversations"


def _at(year: int, month: int, day: int, hour: int = 9) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


def _run_over(user: Any, *turns: tuple[str, datetime], participants: Any = None) -> Conversation:
    """A conversation of the account user's ``(content, sent_at)`` turns, extracted in a run."""
    conversation = Conversation.objects.create(
        owner=user,
        external_id=f"when-{Conversation.objects.count()}",
        participants=participants or [],
    )
    Message.objects.bulk_create(
        Message(
            conversation=conversation,
            role="user",
            content=content,
            external_id=f"m{position}",
            position=position,
            sent_at=sent_at,
        )
        for position, (content, sent_at) in enumerate(turns, start=1)
    )
    run = ExtractionRun.objects.create(conversation=conversation, trigger="manual")
    assert execute_run(run.pk).status == "succeeded"
    return conversation


def _memory(content: str) -> Memory:
    return Memory.objects.get(content=content)


def test_a_two_person_conversation_names_the_other_person(
    alice: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client = api_client(alice)
    conversation = post_json(
        client,
        BASE,
        {
            "external_id": "weekend",
            "participants": [
                {"name": "Mia", "role": "user", "is_account_user": True},
                {"name": "Jon", "role": "user"},
            ],
        },
    ).json()
    with django_capture_on_commit_callbacks(execute=True):
        post_json(
            client,
            f"{BASE}/{conversation['id']}/messages",
            {
                "messages": [
                    {
                        "external_id": "1",
                        "role": "user",
                        "speaker": "Jon",
                        "content": "I went to a pottery class yesterday.",
                        "sent_at": "2023-05-08T10:00:00Z",
                    },
                    {
                        "external_id": "2",
                        "role": "user",
                        "content": "I have been climbing for three years.",
                        "sent_at": "2023-05-08T10:01:00Z",
                    },
                ]
            },
        )
        post_json(client, f"{BASE}/{conversation['id']}/end")

    jon = _memory("Jon went to a pottery class on 7 May 2023")
    assert jon.metadata["speaker"] == "Jon"
    assert jon.metadata["event_date"] == "2023-05-07"
    assert jon.valid_from == datetime(2023, 5, 8, 10, tzinfo=UTC)
    mia = _memory("Has been climbing since 2020")
    assert "speaker" not in mia.metadata and "Mia" not in mia.content
    assert mia.valid_from == datetime(2023, 5, 8, 10, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("said", "sent_at", "content", "event_date"),
    [
        (
            "I went to a pottery class yesterday.",
            _at(2024, 1, 1),
            "Went to a pottery class on 31 December 2023",
            date(2023, 12, 31),
        ),
        (
            "I moved to Berlin last month.",
            _at(2024, 1, 1),
            "Moved to Berlin in December 2023",
            date(2023, 12, 1),
        ),
        (
            "我昨天去了杭州看西湖。",
            _at(2024, 3, 1, 2),
            "2024年2月29日去了杭州看西湖。",
            date(2024, 2, 29),
        ),
        ("我上个月开始学游泳。", _at(2025, 1, 10), "2024年12月开始学游泳。", date(2024, 12, 1)),
    ],
    ids=["yesterday-new-year", "last-month-new-year", "昨天-leap-day", "上个月-new-year"],
)
def test_relative_dates_are_read_against_the_message_date(
    alice: Any, said: str, sent_at: datetime, content: str, event_date: date
) -> None:
    _run_over(alice, (said, sent_at))
    memory = Memory.objects.get(owner=alice)
    assert memory.content == content
    assert memory.metadata["event_date"] == event_date.isoformat()
    assert memory.valid_from == sent_at
    assert "speaker" not in memory.metadata


def test_a_later_message_supersedes_an_earlier_one(alice: Any) -> None:
    _run_over(alice, ("I live in Berlin.", _at(2024, 1, 1)))
    _run_over(alice, ("I live in Lyon now.", _at(2024, 6, 1)))
    berlin, lyon = _memory("Lives in Berlin"), _memory("Lives in Lyon")
    assert berlin.superseded_by == lyon
    assert berlin.valid_until == lyon.valid_from == _at(2024, 6, 1)
    assert list(Memory.objects.in_effect()) == [lyon]


def test_an_earlier_message_read_late_does_not_supersede_a_later_one(alice: Any) -> None:
    _run_over(alice, ("I live in Lyon now.", _at(2024, 6, 1)))
    conversation = _run_over(alice, ("I live in Berlin.", _at(2024, 1, 1)))
    berlin, lyon = _memory("Lives in Berlin"), _memory("Lives in Lyon")
    assert lyon.superseded_by is None and lyon.valid_until is None
    # Kept as history: Berlin until the Lyon statement began.
    assert berlin.superseded_by == lyon
    assert (berlin.valid_from, berlin.valid_until) == (_at(2024, 1, 1), _at(2024, 6, 1))
    assert list(Memory.objects.in_effect()) == [lyon]
    assert ExtractionRun.objects.get(conversation=conversation).superseded == 1


def test_within_one_window_the_later_message_wins(alice: Any) -> None:
    _run_over(
        alice, ("I live in Berlin.", _at(2024, 1, 1)), ("I live in Lyon now.", _at(2024, 6, 1))
    )
    assert _memory("Lives in Berlin").superseded_by == _memory("Lives in Lyon")


def test_a_burst_of_batches_queues_one_job_per_conversation(
    alice: Any,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
) -> None:
    settings.API_RATE_LIMIT = ""
    monkeypatch.setattr(Conf, "SYNC", False)
    client = api_client(alice)
    ids = [post_json(client, BASE, {"external_id": f"burst-{n}"}).json()["id"] for n in range(3)]
    for batch in range(20):  # Interleaved, as several chats would send them.
        for conversation_id in ids:
            messages = [
                {
                    "external_id": f"{batch}-{n}",
                    "role": "user" if n % 2 == 0 else "assistant",
                    "content": f"Batch {batch} turn {n}: we use Django for the reports.",
                }
                for n in range(12)
            ]
            with django_capture_on_commit_callbacks(execute=True):
                post_json(client, f"{BASE}/{conversation_id}/messages", {"messages": messages})
    for conversation_id in ids:
        with django_capture_on_commit_callbacks(execute=True):
            post_json(client, f"{BASE}/{conversation_id}/end")
    # (Beside the jobs embedding the stored messages for episodic recall.)
    assert sum(1 for queued in OrmQ.objects.all() if queued.func() == EXTRACT_TASK) == 3
    assert ExtractionRun.objects.count() == 3


# (earlier turn, later turn, the memory superseded, the one that supersedes it)
CHANGES = [
    ("I live in Boston.", "I moved to Denver last week.", "Lives in Boston", "Moved to Denver"),
    ("I work at Google.", "I quit my job at Google and now work at Stripe.", "Works at Google", "Works at Stripe"),
    ("I work for Harbourline.", "I started at Moneta two weeks ago.", "Works at Harbourline", "Started at Moneta"),
    ("I prefer coffee.", "I switched from coffee to tea.", "Prefers coffee", "Now uses tea instead of coffee"),
    ("I'm engaged!", "We got married on Saturday.", "Is engaged", "Got married"),
    ("I'm a teacher.", "I'm now a nurse at St James.", "Is a teacher", "Is a nurse at St James"),
    ("我住在北京，已经五年了。", "我搬到了上海，房子很大。", "住在北京", "搬到上海"),
    ("我在阿里巴巴工作，做后端开发。", "我现在在腾讯工作，做前端开发。", "在阿里巴巴工作", "在腾讯工作"),
]  # fmt: skip
# Statements about other slots or other people, which supersede nothing.
UNRELATED = [
    ("I live in Boston.", "My sister moved to Denver."),
    ("I work at Google.", "I live in Boston."),
    ("I prefer coffee.", "I switched from Vim to Emacs."),
    ("I'm engaged!", "I'm a teacher."),
    ("我住在北京，已经五年了。", "我现在在腾讯工作，做前端开发。"),
]


@pytest.mark.parametrize(("earlier", "later", "old", "new"), CHANGES)
@pytest.mark.parametrize("read_in_order", [True, False])
def test_a_change_supersedes_what_was_true_before(
    alice: Any, earlier: str, later: str, old: str, new: str, read_in_order: bool
) -> None:
    turns = [(earlier, _at(2023, 1, 10)), (later, _at(2023, 5, 8))]
    # Read in either order, the later statement (by when it was said) is the current one.
    _run_over(alice, *(turns if read_in_order else turns[::-1]))
    older = Memory.objects.get(content__startswith=old)
    newer = Memory.objects.get(content__startswith=new)
    assert older.superseded_by_id == newer.pk
    assert older.valid_until == newer.valid_from == _at(2023, 5, 8)
    assert newer.superseded_by_id is None


@pytest.mark.parametrize(("earlier", "later"), UNRELATED)
def test_unrelated_statements_supersede_nothing(alice: Any, earlier: str, later: str) -> None:
    _run_over(alice, (earlier, _at(2023, 1, 10)), (later, _at(2023, 5, 8)))
    assert Memory.objects.count() == 2
    assert not Memory.objects.filter(superseded_by__isnull=False).exists()
    assert ExtractionRun.objects.get().superseded == 0
