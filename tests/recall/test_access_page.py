"""Who read what: the access page (/settings/access) and a memory's "Used by" lines."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from recall.models import AccessLog
from tests.conftest import client_for
from tests.recall_helpers import ApiClient, remember

pytestmark = pytest.mark.django_db


def test_preview_logs_the_app_the_query_and_the_memories(alice):
    memory = remember(alice, "Prefers tabs over spaces")
    api = ApiClient(alice)
    api.post(
        "/injection-preview", {"message": "tabs or spaces? my key is sk-abcdef1234567890abcdef"}
    )
    log = AccessLog.objects.get()
    assert log.api_token == api.token and log.memory_ids == [memory.pk]
    assert log.query.startswith("tabs or spaces?")
    assert "sk-abcdef1234567890abcdef" not in log.query


def test_owner_sees_who_read_what_filtered_and_paginated(alice):
    memory = remember(alice, "Prefers tabs over spaces")
    laptop = ApiClient(alice)
    laptop.token.name = "Laptop chat"
    laptop.token.save()
    laptop.post("/injection-preview", {"message": "tabs?"})
    client = client_for(alice)
    client.post(
        "/api/v1/injection-preview", {"message": "spaces?"}, content_type="application/json"
    )
    page = client.get("/settings/access").content.decode()
    assert "Laptop chat" in page and "browser session" in page
    assert "“tabs?”" in page and "“spaces?”" in page
    assert f"/settings/memories?memory={memory.pk}" in page

    only_laptop = client.get("/settings/access", {"app": laptop.token.pk}).content.decode()
    assert "“tabs?”" in only_laptop and "“spaces?”" not in only_laptop
    browser = client.get("/settings/access", {"app": "browser"}).content.decode()
    assert "“spaces?”" in browser and "“tabs?”" not in browser
    tomorrow = (timezone.localdate() + timedelta(days=1)).isoformat()
    later = client.get("/settings/access", {"since": tomorrow}).content.decode()
    assert "“tabs?”" not in later and "No app has read your memories yet" in later

    AccessLog.objects.bulk_create(
        AccessLog(user=alice, memory_ids=[memory.pk], query=f"q{i}") for i in range(30)
    )
    first = client.get("/settings/access").content.decode()
    assert "Page 1 of 2" in first
    assert "Page 2 of 2" in client.get("/settings/access", {"page": 2}).content.decode()


def test_stranger_sees_none_of_it_and_anonymous_logs_in(alice, charlie):
    remember(alice, "Prefers tabs over spaces")
    api = ApiClient(alice)
    api.post("/injection-preview", {"message": "tabs?"})
    stranger = client_for(charlie)
    assert "“tabs?”" not in stranger.get("/settings/access").content.decode()
    assert stranger.get("/settings/access", {"app": api.token.pk}).status_code == 404
    anonymous = Client().get("/settings/access")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]


def test_memory_history_says_which_app_used_it(alice, charlie):
    memory = remember(alice, "Prefers tabs over spaces")
    api = ApiClient(alice)
    api.token.name = "Laptop chat"
    api.token.save()
    api.post("/injection-preview", {"message": "tabs?"})
    api.post("/injection-preview", {"message": "tabs again?"})
    history = client_for(alice).get(f"/settings/memories/{memory.pk}/history").content.decode()
    assert "Used by Laptop chat, 2 times" in history
    assert client_for(charlie).get(f"/settings/memories/{memory.pk}/history").status_code == 404


def test_the_past_turns_given_are_shown_and_link_to_their_conversation(alice):
    """Not only "and 2 turns of past conversations" (issue 44 item 21)."""
    from tests.extraction_helpers import conversation_with

    conversation = conversation_with(alice, ("user", "The bridge report is due on Friday"))
    message = conversation.messages.get()
    AccessLog.objects.create(user=alice, memory_ids=[], message_ids=[message.pk, 999_999])
    page = client_for(alice).get("/settings/access").content.decode()
    assert "and 2 turns of past conversations" in page
    assert f'href="/settings/conversations/{conversation.pk}#message-{message.pk}"' in page
    assert "The bridge report is due on Friday" in page
    assert "1 turn no longer available" in page
