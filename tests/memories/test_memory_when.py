"""The pages show the day a memory is about where it is not the day it was stored."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from django.utils import timezone, translation

from accounts.models import MemorySettings
from conversations.extraction.runs import execute_run
from conversations.models import Conversation, ExtractionRun, Message
from memories.models import Memory
from memories.services import memory_create
from memories.when import memory_when
from tests.conftest import client_for

pytestmark = pytest.mark.django_db

LIST = "/settings/memories"
CHINESE = {"Accept-Language": "zh-CN,zh;q=0.9"}


def _said(owner: Any, content: str, sent_at: datetime) -> Memory:
    """The memory a run extracts from the account user's one message."""
    conversation = Conversation.objects.create(owner=owner, external_id=f"c{sent_at:%s}")
    Message.objects.create(
        conversation=conversation,
        role="user",
        content=content,
        external_id="1",
        position=1,
        sent_at=sent_at,
    )
    execute_run(ExtractionRun.objects.create(conversation=conversation, trigger="manual").pk)
    return Memory.objects.get(conversation=conversation)


def test_only_a_day_other_than_the_stored_one_is_shown(alice: Any) -> None:
    today = memory_create(owner=alice, content="Prefers tea")
    assert memory_when(today) is None
    said = _said(alice, "I live in Lyon with my sister.", datetime(2023, 5, 8, 10, tzinfo=UTC))
    assert "event_date" not in said.metadata
    with translation.override("en"):
        when = memory_when(said)
    assert when is not None
    assert (when.iso, when.label, when.title) == ("2023-05-08", "8 May 2023", "True since")
    same_day = _said(alice, "I went to a pottery class yesterday.", timezone.now())
    # An event the day before it was said and stored still shows.
    assert memory_when(same_day) is not None


def test_the_list_row_shows_the_event_day_in_english_and_chinese(alice: Any) -> None:
    _said(alice, "I went to a pottery class yesterday.", datetime(2023, 5, 8, 10, tzinfo=UTC))
    client = client_for(alice)
    html = client.get(LIST, headers={"Accept-Language": "en"}).content.decode()
    assert (
        '<span class="memory-when" data-date="2023-05-07" title="When it happened">7 May 2023</span>'
        in html
    )
    chinese = client.get(LIST, headers=CHINESE).content.decode()
    assert 'title="发生日期">2023年5月7日</span>' in chinese


def test_the_review_queue_shows_the_day_too(alice: Any) -> None:
    MemorySettings.objects.filter(user=alice).update(review_extracted=True)
    _said(alice, "I went to a pottery class yesterday.", datetime(2023, 5, 8, 10, tzinfo=UTC))
    html = client_for(alice).get("/review/", headers={"Accept-Language": "en"}).content.decode()
    assert 'data-date="2023-05-07" title="When it happened">7 May 2023</span>' in html
