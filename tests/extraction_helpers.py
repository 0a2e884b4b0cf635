"""Helpers for the extraction tests: an API client with a token, conversations with messages."""

from __future__ import annotations

import json
from typing import Any

from django.db import connection
from django.test import Client

from accounts.models import ApiToken
from conversations.extraction import runs
from conversations.models import Conversation, Message


def api_client(user: Any) -> Client:
    _token, secret = ApiToken.issue(user=user, name="test client")
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def post_json(client: Client, path: str, data: Any = None) -> Any:
    return client.post(path, json.dumps(data or {}), content_type="application/json")


def conversation_with(user: Any, *turns: tuple[str, str], **fields: Any) -> Conversation:
    """A conversation holding ``turns`` as (role, content) messages at positions 1, 2, …"""
    conversation = Conversation.objects.create(
        owner=user,
        external_id=fields.pop("external_id", f"conv-{Conversation.objects.count()}"),
        **fields,
    )
    add_messages(conversation, *turns)
    return conversation


def add_messages(conversation: Conversation, *turns: tuple[str, str]) -> list[Message]:
    start = conversation.messages.count()
    return Message.objects.bulk_create(
        Message(
            conversation=conversation,
            role=role,
            content=content,
            external_id=f"m{start + index}",
            position=start + index,
        )
        for index, (role, content) in enumerate(turns, start=1)
    )


def lock_conversation(conversation: Conversation) -> None:
    """Hold ``conversation`` as a worker running one of its runs does, until the transaction ends."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", runs._lock_key(conversation.pk))


def extracted(
    user: Any, *turns: tuple[str, str], extractor: str = "rules"
) -> list[tuple[str, str]]:
    """(kind, content) of the memories in effect after a real run of ``extractor`` over
    ``turns`` (role, content)."""
    from conversations.extraction.runs import execute_run
    from conversations.models import ExtractionRun
    from memories.models import Memory

    conversation = conversation_with(user, *turns)
    run = ExtractionRun.objects.create(
        conversation=conversation, trigger="end", extractor=extractor
    )
    assert execute_run(run.pk).status in ("succeeded", "skipped")
    stored = Memory.objects.filter(owner=user).alive().current()
    return sorted(stored.filter(status__in=["active", "pending"]).values_list("kind", "content"))
