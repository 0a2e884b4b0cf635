"""Participants: who takes part in a conversation, and who said each message."""

from __future__ import annotations

from typing import Any

import pytest

from conversations.models import Conversation, Message
from tests.extraction_helpers import api_client, post_json

pytestmark = pytest.mark.django_db

BASE = "/api/v1/conversations"
FRIENDS = [
    {"name": "Mia", "role": "user", "is_account_user": True},
    {"name": "Jon", "role": "user"},
]


def test_participants_are_stored_returned_and_replaced_by_posting_again(alice: Any) -> None:
    client = api_client(alice)
    created = post_json(client, BASE, {"external_id": "chat", "participants": FRIENDS})
    assert created.status_code == 201
    assert created.json()["participants"] == [
        {"name": "Mia", "role": "user", "is_account_user": True},
        {"name": "Jon", "role": "user", "is_account_user": False},
    ]
    again = post_json(client, BASE, {"external_id": "chat", "participants": FRIENDS[:1]})
    assert again.status_code == 200
    assert [p["name"] for p in again.json()["participants"]] == ["Mia"]
    untouched = post_json(client, BASE, {"external_id": "chat"})
    assert [p["name"] for p in untouched.json()["participants"]] == ["Mia"]


@pytest.mark.parametrize(
    "participants",
    [
        [{"name": "Mia"}, {"name": "Mia", "role": "assistant"}],
        [{"name": "Mia", "is_account_user": True}, {"name": "Jon", "is_account_user": True}],
        [{"name": ""}],
    ],
)
def test_invalid_participants_are_refused(alice: Any, participants: list[Any]) -> None:
    response = post_json(
        api_client(alice), BASE, {"external_id": "c", "participants": participants}
    )
    assert response.status_code in (400, 422)
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert not Conversation.objects.exists()


def test_each_message_is_attributed_to_its_speaker(alice: Any) -> None:
    client = api_client(alice)
    conversation = post_json(client, BASE, {"external_id": "c", "participants": FRIENDS}).json()
    post_json(
        client,
        f"{BASE}/{conversation['id']}/messages",
        {
            "messages": [
                {"external_id": "1", "role": "user", "content": "I went hiking.", "speaker": "Jon"},
                {"external_id": "2", "role": "user", "content": "I stayed home."},
                {"external_id": "3", "role": "assistant", "content": "Nice."},
                {"external_id": "4", "role": "user", "content": "Hi.", "speaker": "Ana"},
            ]
        },
    )
    stored = Conversation.objects.get()
    speakers = [
        stored.speaker_of(message.role, message.speaker)
        for message in Message.objects.order_by("position")
    ]
    assert speakers == [("Jon", False), ("Mia", True), ("Assistant", False), ("Ana", False)]


def test_without_participants_the_user_is_the_account_and_the_other_the_assistant(
    alice: Any,
) -> None:
    conversation = Conversation.objects.create(owner=alice, external_id="c")
    assert conversation.speaker_of("user") == ("alice", True)
    alice.first_name, alice.last_name = "Alice", "Liddell"
    assert conversation.speaker_of("user") == ("Alice Liddell", True)
    assert conversation.speaker_of("assistant") == ("Assistant", False)
