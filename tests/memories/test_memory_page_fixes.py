"""The memories page's rough edges, smoothed: each test names the defect it guards against."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from accounts.models import MemorySettings
from conversations.extraction.runs import execute_run, extraction_request, run_batch
from conversations.notices import extraction_notices
from memories.models import Kind, Memory, MemoryEvent, Status
from memories.services import memory_create, memory_reject, memory_set_pinned, memory_update
from tests.conftest import client_for
from tests.extraction_helpers import conversation_with
from tests.recall_helpers import ApiClient

pytestmark = pytest.mark.django_db

LIST = "/settings/memories"


def htmx(target: str = "", current: str = LIST) -> dict[str, str]:
    headers = {"HX-Request": "true", "HX-Current-URL": f"http://testserver{current}"}
    if target:
        headers["HX-Target"] = target
    return headers


def personal(owner: Any, content: str, **fields: Any) -> Memory:
    return memory_create(owner=owner, content=content, actor=owner, **fields)


def _extract(owner: Any, text: str) -> Any:
    conversation = conversation_with(owner, ("user", text))
    return execute_run(extraction_request(conversation=conversation, trigger="manual").pk)


# 1. "Apply" with nothing ticked ------------------------------------------------------


def test_bulk_apply_with_nothing_selected_answers_with_a_toast_only(alice: Any) -> None:
    personal(alice, "Tea")
    response = client_for(alice).post(
        reverse("memory-bulk"), {"action": "delete", "next": LIST}, headers=htmx()
    )
    html = response.content.decode()
    # Nothing replaces the page: the answer is a toast swapped into #toasts, out of band.
    assert response.status_code == 422
    assert 'hx-swap-oob="beforeend:#toasts"' in html or 'hx-swap-oob="innerHTML:#toasts"' in html
    assert "Select at least one memory first." in html
    assert html.strip().startswith("<div hx-swap-oob")


def test_bulk_apply_with_nothing_selected_without_javascript_shows_the_page(alice: Any) -> None:
    personal(alice, "Tea")
    client = client_for(alice)
    response = client.post(reverse("memory-bulk"), {"action": "delete", "next": LIST}, follow=True)
    html = response.content.decode()
    assert response.redirect_chain[-1][0] == LIST
    assert "<h1>Memories</h1>" in html and "Select at least one memory first." in html


# 2 and 3. The "Memory updated" notice --------------------------------------------------


def test_notice_undo_with_htmx_toasts_and_reloads_the_list(alice: Any) -> None:
    run = _extract(alice, "I prefer Vue for the frontend")
    response = client_for(alice).post(
        f"/notices/extraction/{run_batch(run.pk)}/undo", headers=htmx()
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="extraction-notice"' in html and "Memory updated" not in html
    assert "#toasts" in html and "Undone: the memories are back as they were." in html
    assert "memories-reload" in response["HX-Trigger"]


def test_notice_says_waiting_for_review_and_drops_a_rejected_memory(alice: Any) -> None:
    MemorySettings.objects.filter(user=alice).update(review_extracted=True)
    _extract(alice, "I prefer Vue for the frontend. I prefer tabs over spaces.")
    [notice] = extraction_notices(alice)
    assert {change for change, _memory in notice.changes} == {"pending"}
    page = client_for(alice).get(LIST).content.decode()
    assert "Waiting for your review:" in page and "Added:" not in page
    vue = Memory.objects.get(content__icontains="Vue")
    memory_reject(memory=vue, actor=alice)
    [notice] = extraction_notices(alice)
    assert [memory.pk for _change, memory in notice.changes] != [] and vue.pk not in [
        memory.pk for _change, memory in notice.changes
    ]
    memory_reject(memory=Memory.objects.get(content__icontains="tabs"), actor=alice)
    assert extraction_notices(alice) == []


def test_the_notice_refreshes_itself_when_memories_change(alice: Any) -> None:
    _extract(alice, "I prefer Vue for the frontend")
    page = client_for(alice).get(LIST).content.decode()
    notice = re.search(r'<div id="extraction-notice"[^>]*>', page)
    assert notice and "memories-changed from:body" in notice.group()
    part = client_for(alice).get(LIST, headers=htmx("extraction-notice"))
    assert part.content.decode().lstrip().startswith('<div id="extraction-notice"')


# 4. Duplicates and the kind of a manual add ----------------------------------------------


def test_adding_the_same_text_twice_by_hand_keeps_one(alice: Any) -> None:
    client = client_for(alice)
    data = {"content": "The office is in Lyon", "kind": "", "where": "personal", "next": LIST}
    client.post(reverse("memory-add"), data, headers=htmx())
    response = client.post(reverse("memory-add"), data, headers=htmx())
    html = response.content.decode()
    [memory] = Memory.objects.all()
    assert "You already have this" in html
    assert f"memory={memory.pk}" in html
    near = client.post(
        reverse("memory-add"), {**data, "content": "the office is in Lyon."}, headers=htmx()
    )
    assert "You already have this" in near.content.decode()
    assert Memory.objects.count() == 1


def test_adding_a_duplicate_without_javascript_says_so(alice: Any) -> None:
    existing = personal(alice, "The office is in Lyon")
    response = client_for(alice).post(
        reverse("memory-add"),
        {"content": "The office is in Lyon", "kind": "", "where": "personal", "next": LIST},
    )
    html = response.content.decode()
    assert "You already have this" in html and f"memory={existing.pk}" in html
    assert Memory.objects.count() == 1


def test_a_manual_add_chooses_its_kind_as_extraction_does(alice: Any) -> None:
    client = client_for(alice)
    form = client.get(LIST).content.decode()
    assert "Choose for me" in form
    client.post(
        reverse("memory-add"),
        {"content": "I prefer tabs over spaces", "kind": "", "where": "personal", "next": LIST},
    )
    client.post(
        reverse("memory-add"),
        {"content": "I prefer green tea", "kind": "goal", "where": "personal", "next": LIST},
    )
    kinds = dict(Memory.objects.values_list("content", "kind"))
    assert kinds == {"I prefer tabs over spaces": Kind.PREFERENCE, "I prefer green tea": Kind.GOAL}


def test_remember_command_does_not_store_a_duplicate(alice: Any) -> None:
    api = ApiClient(alice)
    first = api.post("/commands", {"command": "/remember I prefer tabs over spaces"}).json()
    again = api.post("/commands", {"command": "/remember I prefer tabs over spaces"}).json()
    [memory] = Memory.objects.all()
    assert first["changed"] is True and memory.kind == Kind.PREFERENCE
    assert again["changed"] is False
    assert again["reply"].startswith("You already have this")
    assert f"memory={memory.pk}" in again["reply"]
    chinese = api.post("/commands", {"command": "/remember 我喜欢用 vitest"}).json()
    chinese_again = api.post("/commands", {"command": "/remember 我喜欢用 vitest"}).json()
    assert chinese["changed"] is True and chinese_again["reply"].startswith("你已经")
    assert Memory.objects.count() == 2


# 5. Validation errors keep the HTMX form ----------------------------------------------------


def test_an_invalid_add_rerenders_an_htmx_form(alice: Any) -> None:
    response = client_for(alice).post(
        reverse("memory-add"), {"content": "", "where": "personal", "next": LIST}, headers=htmx()
    )
    html = response.content.decode()
    assert response.status_code == 422
    assert 'hx-post="/settings/memories/add"' in html or "hx-post=" in html
    assert "Write what should be remembered." in html
    assert f'name="next" value="{LIST}"' in html


# 7. Pinned first --------------------------------------------------------------------------


def test_pinned_memories_come_first_in_the_default_sort(alice: Any) -> None:
    pinned = personal(alice, "Old but pinned")
    personal(alice, "Newer")
    memory_set_pinned(memory=pinned, pinned=True, actor=alice)
    html = client_for(alice).get(LIST).content.decode()
    assert html.index("Old but pinned") < html.index("Newer")
    newest = client_for(alice).get(LIST + "?sort=newest").content.decode()
    assert newest.index("Old but pinned") < newest.index("Newer")


# 8. The activity feed shows each event's own text ---------------------------------------------


def test_activity_shows_the_text_as_it_was_at_each_event(alice: Any, project: Any) -> None:
    memory = memory_create(
        owner=alice, content="Uses MySQL", scope="project", project=project, actor=alice
    )
    memory_update(
        memory=memory, changes={"content": "Uses PostgreSQL"}, expected_revision=None, actor=alice
    )
    html = client_for(alice).get(f"/projects/{project.slug}/activity").content.decode()
    created = MemoryEvent.objects.get(memory=memory, action="created")
    assert created.after and created.after["content"] == "Uses MySQL"
    lines = re.findall(r'class="activity-memory"[^>]*>([^<]*)<', html)
    assert lines == ["Uses PostgreSQL", "Uses MySQL"]


# 9. Rejected memories are reachable ------------------------------------------------------------


def test_rejected_is_a_tab(alice: Any) -> None:
    memory = personal(alice, "Not true at all", status=Status.PENDING)
    memory_reject(memory=memory, actor=alice)
    client = client_for(alice)
    page = client.get(LIST).content.decode()
    assert "?state=rejected" in page and "Rejected" in page
    rejected = client.get(LIST + "?state=rejected").content.decode()
    assert f'id="memory-{memory.pk}"' in rejected


# 10. An invalid import file shows its error alone ---------------------------------------------


def test_an_invalid_import_shows_only_the_error(alice: Any) -> None:
    upload = SimpleUploadedFile("notes.txt", b"hello")
    response = client_for(alice).post(reverse("memory-files-preview"), {"files": [upload]})
    html = response.content.decode()
    assert "notes.txt: not a Markdown (.md) or zip file." in html
    assert "To add:" not in html and "Nothing new" not in html and "To update:" not in html
    assert "Skipped:" not in html


# 11. Without JavaScript, one message for a delete ----------------------------------------------


def test_delete_without_javascript_says_it_once(alice: Any) -> None:
    memory = personal(alice, "Tea")
    response = client_for(alice).post(
        reverse("memory-delete", args=[memory.pk]), {"next": LIST}, follow=True
    )
    html = response.content.decode()
    assert html.count("Memory deleted.") == 1
    assert "undo-offer" in html


# 13. Exact keyword hits carry no "Similar meaning" badge ------------------------------------------


def test_an_exact_keyword_hit_has_no_similar_meaning_badge(alice: Any) -> None:
    personal(alice, "The cluster uses kubernetes")
    html = client_for(alice).get(LIST + "?q=kubernetes").content.decode()
    assert "The cluster uses <mark>kubernetes</mark>" in html
    assert "badge-meaning" not in html


def test_a_row_leaving_its_tab_updates_the_bulk_count_and_the_last_reloads(alice: Any) -> None:
    first, second = personal(alice, "One"), personal(alice, "Two")
    client = client_for(alice)
    response = client.post(reverse("memory-delete", args=[first.pk]), headers=htmx())
    html = response.content.decode()
    assert '<span id="bulk-matching" hx-swap-oob="true">All 1 matching</span>' in html
    assert response["HX-Trigger"] == '{"memories-changed": {}}'
    assert 'id="memory-tabs" class="tabs-bar" hx-swap-oob="true"' in html
    last = client.post(reverse("memory-delete", args=[second.pk]), headers=htmx())
    assert 'id="memory-results" class="results" hx-swap-oob="true"' in last.content.decode()
