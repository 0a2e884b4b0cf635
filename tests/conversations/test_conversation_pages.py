"""/settings/conversations: the list, a conversation's messages with the memories made from
each, deleting one or all (the memories stay, their source shown as deleted), and the
daily retention of messages."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone

from conversations.evidence import evidence_of
from conversations.extraction.runs import execute_run, extraction_request
from conversations.jobs import purge_messages
from conversations.models import Conversation, Message
from memories.models import Memory
from memories.services import memory_create, memory_delete
from tests.conftest import client_for
from tests.extraction_helpers import conversation_with
from tests.trust_helpers import columns_holding

pytestmark = pytest.mark.django_db

LIST = "/settings/conversations"


def chat(owner: Any, title: str = "Trip planning", **fields: Any) -> Conversation:
    conversation = Conversation.objects.create(
        owner=owner, external_id=title, title=title, client="Claude Desktop", **fields
    )
    return conversation


def say(conversation: Conversation, content: str, role: str = "user", **fields: Any) -> Message:
    position = conversation.messages.count() + 1
    return Message.objects.create(
        conversation=conversation,
        role=role,
        content=content,
        external_id=f"m{position}",
        position=position,
        **fields,
    )


def extracted(conversation: Conversation, message: Message, content: str) -> Memory:
    return memory_create(
        owner=conversation.owner,
        content=content,
        conversation=conversation,
        origin="extracted",
        evidence=[{"message_ids": [message.pk], "quote": message.content[:20]}],
    )


def test_list_shows_own_conversations_with_app_counts_and_temporary(alice: Any, bob: Any) -> None:
    trip = chat(alice, "Trip planning")
    first = say(trip, "I live in Lyon and love trains")
    say(trip, "Noted!", role="assistant")
    extracted(trip, first, "Lives in Lyon")
    gone = extracted(trip, first, "Loves trains")
    memory_delete(memory=gone, actor=alice)
    chat(alice, "Secret chat", temporary=True)
    chat(bob, "Bob's chat")
    page = client_for(alice).get(LIST).content.decode()
    assert "Trip planning" in page and "Claude Desktop" in page
    assert "2 messages" in page
    assert "1 memory" in page  # The one in the trash is not counted.
    assert "Secret chat" in page and "Temporary" in page
    assert "Bob&#x27;s chat" not in page and "Bob's chat" not in page
    assert f'href="/settings/conversations/{trip.pk}"' in page
    assert "Delete all conversations…" in page


def test_pages_require_log_in_and_hide_others_conversations(
    client: Any, alice: Any, charlie: Any
) -> None:
    trip = chat(alice)
    for url in (
        LIST,
        f"{LIST}/{trip.pk}",
        f"{LIST}/{trip.pk}/delete",
        f"{LIST}/delete-all",
    ):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response.url
    stranger = client_for(charlie)
    assert stranger.get(f"{LIST}/{trip.pk}").status_code == 404
    assert stranger.post(f"{LIST}/{trip.pk}/delete", {"confirm": "delete"}).status_code == 404
    assert Conversation.objects.filter(pk=trip.pk).exists()


def test_conversation_page_shows_messages_with_speaker_and_their_memories(alice: Any) -> None:
    trip = chat(alice, participants=[{"name": "Mia", "role": "user", "is_account_user": True}])
    first = say(trip, "I live in Lyon and love trains")
    say(trip, "Lyon is lovely.", role="assistant")
    memory = extracted(trip, first, "Lives in Lyon")
    page = client_for(alice).get(f"{LIST}/{trip.pk}").content.decode()
    assert "Mia" in page and "Assistant" in page
    assert "I live in Lyon and love trains" in page
    assert "1 memory made from this conversation" in page
    assert f"/settings/memories?memory={memory.pk}" in page
    # The memory sits beside the message it came from.
    row = page[page.index(f'id="message-{first.pk}"') :]
    row = row[: row.index("</li>")]
    assert "Lives in Lyon" in row


def test_deleting_a_conversation_keeps_its_memories_with_source_deleted(alice: Any) -> None:
    trip = chat(alice)
    message = say(trip, "My passport number is in the drawer XYZ-778")
    memory = extracted(trip, message, "Passport is in the drawer")
    client = client_for(alice)
    confirm = client.get(f"{LIST}/{trip.pk}/delete").content.decode()
    assert "The memories made from it stay" in confirm
    assert client.post(f"{LIST}/{trip.pk}/delete").status_code == 200  # Not confirmed.
    assert Conversation.objects.filter(pk=trip.pk).exists()
    response = client.post(f"{LIST}/{trip.pk}/delete", {"confirm": "delete"})
    assert response.status_code == 302
    assert not Conversation.objects.filter(pk=trip.pk).exists()
    assert not Message.objects.filter(pk=message.pk).exists()
    memory.refresh_from_db()
    assert memory.conversation_id is None
    assert memory.evidence[0]["quote"] == "My passport number i"
    assert columns_holding("drawer XYZ-778") == []
    listing = client.get("/settings/memories").content.decode()
    assert "source deleted" in listing
    evidence = client.get(f"/settings/memories/{memory.pk}/evidence").content.decode()
    assert "Source deleted" in evidence
    assert "My passport number i" in evidence


def test_delete_all_confirms_the_number(alice: Any, bob: Any) -> None:
    chat(alice, "One")
    chat(alice, "Two")
    bobs = chat(bob, "Bob's")
    client = client_for(alice)
    assert "Delete 2 conversations" in client.get(f"{LIST}/delete-all").content.decode()
    assert client.post(f"{LIST}/delete-all", {"count": "3"}).status_code == 409
    assert Conversation.objects.filter(owner=alice).count() == 2
    assert client.post(f"{LIST}/delete-all", {"count": "2"}).status_code == 302
    assert not Conversation.objects.filter(owner=alice).exists()
    assert Conversation.objects.filter(pk=bobs.pk).exists()


@override_settings(MEMORY_MESSAGE_RETENTION_DAYS=90)
def test_retention_deletes_old_messages_and_temporary_ones_after_a_day(alice: Any) -> None:
    now = timezone.now()
    trip = chat(alice)
    old = say(trip, "Said long ago", created_at=now - timedelta(days=91))
    recent = say(trip, "Said last week", created_at=now - timedelta(days=7))
    secret = chat(alice, "Temporary", temporary=True)
    day_old = say(secret, "Off the record", created_at=now - timedelta(hours=25))
    fresh = say(secret, "Just now", created_at=now - timedelta(hours=1))
    assert purge_messages() == 2
    assert set(Message.objects.values_list("pk", flat=True)) == {recent.pk, fresh.pk}
    assert old.pk and day_old.pk
    assert Conversation.objects.count() == 2


@override_settings(MEMORY_MESSAGE_RETENTION_DAYS=0)
def test_retention_zero_keeps_messages_forever_but_not_temporary_ones(alice: Any) -> None:
    now = timezone.now()
    trip = chat(alice)
    Conversation.objects.filter(pk=trip.pk).update(extracted_through=1)
    kept = say(trip, "Said years ago", created_at=now - timedelta(days=2000))
    secret = chat(alice, "Temporary", temporary=True)
    Conversation.objects.filter(pk=secret.pk).update(extracted_through=1)
    say(secret, "Off the record", created_at=now - timedelta(hours=25))
    assert purge_messages() == 1
    assert list(Message.objects.values_list("pk", flat=True)) == [kept.pk]
    # Emptied, it is read from the start again when more arrive.
    assert Conversation.objects.get(pk=secret.pk).extracted_through == 0
    assert Conversation.objects.get(pk=trip.pk).extracted_through == 1


def test_navigation_links_to_the_pages(alice: Any) -> None:
    page = client_for(alice).get("/settings/memories").content.decode()
    assert page.count('href="/settings/conversations"') >= 2  # The nav and the page.
    assert 'href="/settings/data"' in page


def test_memories_an_extraction_run_made_sit_beside_their_message(alice: Any) -> None:
    """A run writes evidence as ``{"messages": [...]}``: the page and the evidence panel read it."""
    conversation = conversation_with(alice, ("user", "I live in Lyon and love trains"))
    execute_run(extraction_request(conversation=conversation, trigger="manual").pk)
    message = conversation.messages.get()
    memory = Memory.objects.get(conversation=conversation)
    assert memory.evidence[0]["messages"] == [message.pk]
    page = client_for(alice).get(f"{LIST}/{conversation.pk}").content.decode()
    row = page[page.index(f'id="message-{message.pk}"') :]
    row = row[: row.index("</li>")]
    assert memory.content in row
    [evidence] = evidence_of(memory, alice)
    assert [source.role for source in evidence.messages] == ["user"]


def test_a_conversation_started_when_its_first_message_was_sent(alice: Any) -> None:
    """Not when the app first sent it here (an import, a late sync): issue 44 item 8."""
    trip = chat(alice)
    say(trip, "Planning the Lyon trip", sent_at=timezone.now() - timedelta(days=400))
    started = (timezone.now() - timedelta(days=400)).strftime("%Y-%m-%d")
    client = client_for(alice)
    for page in (client.get(LIST), client.get(f"{LIST}/{trip.pk}")):
        assert f'<time datetime="{started}' in page.content.decode()
