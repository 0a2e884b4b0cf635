"""/settings/memories through real URLs: what each person sees and may do."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone

from accounts.models import MemorySettings
from conversations.models import Conversation, Message
from memories.models import Memory, MemoryEvent
from memories.services import memory_create, memory_update
from tests.conftest import client_for
from tests.recall_helpers import remember

pytestmark = pytest.mark.django_db

LIST = "/settings/memories"


def htmx(target: str = "", current: str = LIST) -> dict[str, str]:
    headers = {"HX-Request": "true", "HX-Current-URL": f"http://testserver{current}"}
    if target:
        headers["HX-Target"] = target
    return headers


def personal(owner: Any, content: str, **fields: Any) -> Memory:
    return memory_create(owner=owner, content=content, actor=owner, **fields)


def shared(project: Any, owner: Any, content: str, **fields: Any) -> Memory:
    return memory_create(
        owner=owner, content=content, scope="project", project=project, actor=owner, **fields
    )


def reloaded(memory: Memory) -> Memory:
    return Memory.objects.get(pk=memory.pk)


# The list --------------------------------------------------------------------------


def test_anonymous_is_sent_to_log_in(client: Any) -> None:
    response = client.get(LIST)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_home_sends_a_signed_in_user_to_the_page(alice: Any) -> None:
    response = client_for(alice).get("/")
    assert response.status_code == 302
    assert response["Location"] == LIST


def test_list_shows_own_and_project_memories_only(
    alice: Any, bob: Any, charlie: Any, project: Any
) -> None:
    personal(alice, "Alice likes tea")
    shared(project, bob, "The survey uses WGS84")
    personal(bob, "Bob's private note")
    personal(charlie, "Charlie's secret")
    page = client_for(alice).get(LIST).content.decode()
    assert "Alice likes tea" in page
    assert "The survey uses WGS84" in page
    assert "Track Survey" in page
    assert "private note" not in page
    assert "secret" not in page
    assert "2 memories" in page


def test_memory_content_is_escaped(alice: Any) -> None:
    personal(alice, "<script>alert(1)</script>", tags=["<b>x</b>"])
    page = client_for(alice).get(LIST).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page


def test_row_shows_kind_scope_use_scores_origin_and_states(alice: Any, project: Any) -> None:
    conversation = Conversation.objects.create(owner=alice, external_id="c1", title="Trip planning")
    memory = memory_create(
        owner=alice,
        content="Prefers window seats",
        kind="preference",
        importance=0.9,
        confidence=0.75,
        origin="extracted",
        conversation=conversation,
        pinned=True,
    )
    Memory.objects.filter(pk=memory.pk).update(
        access_count=3, created_at=timezone.now() - timedelta(days=3)
    )
    newer = personal(alice, "Prefers aisle seats")
    Memory.objects.filter(pk=memory.pk).update(superseded_by=newer)
    page = client_for(alice).get(LIST).content.decode()
    for text in (
        "Preference",
        "Personal",
        "3\xa0days ago",
        "used 3 times",
        "importance 90%",
        "confidence 75%",
        "Extracted",
        "from “Trip planning”",
        "Pinned",
        "Replaced by a newer memory",
        f"/settings/memories/{newer.pk}/history",
    ):
        assert text in page, text
    # That it was replaced shows on the row itself, before its details are opened.
    summary = page.split('class="memory-details"')[0].rsplit("<summary", 1)[1]
    assert "Replaced by a newer memory" in summary


def test_search_narrows_and_highlights(alice: Any) -> None:
    personal(alice, "I prefer green tea")
    personal(alice, "我喜欢用 Vue 写前端")
    page = client_for(alice).get(LIST, {"q": "gree"}).content.decode()
    assert "<mark>green</mark> tea" in page
    assert "Vue" not in page
    page = client_for(alice).get(LIST, {"q": "喜欢"}).content.decode()
    assert "我<mark>喜欢</mark>用" in page
    assert "green" not in page


def test_search_also_finds_memories_by_meaning(alice: Any) -> None:
    remember(alice, "The cluster uses kubernetes")
    remember(alice, "I prefer green tea")
    page = client_for(alice).get(LIST, {"q": "kubernetse"}).content.decode()
    # A misspelling matches no word, but semantic recall finds the memory and says so.
    assert "The cluster uses kubernetes" in page and "<mark>" not in page
    assert "Similar meaning" in page
    assert "green tea" not in page
    assert "All 1 matching" in page


def test_searching_sorts_by_best_match_unless_another_sort_is_chosen(alice: Any) -> None:
    best = remember(alice, "kubernetes")
    wordy = remember(
        alice,
        "the onboarding notes for new people in the team mention kubernetes briefly, "
        "among many other tools and services we run every day",
    )
    client = client_for(alice)

    def order(**params: str) -> list[int]:
        page = client.get(LIST, {"q": "kubernetes", **params}).content.decode()
        return sorted((best.pk, wordy.pk), key=lambda pk: page.index(f'id="memory-{pk}"'))

    # Both match the word; the short one is also nearest in meaning, so it comes first.
    assert order() == [best.pk, wordy.pk]
    assert order(sort="newest") == [wordy.pk, best.pk]
    page = client.get(LIST, {"q": "kubernetes"}).content.decode()
    assert '<option value="" selected>Sort: Best match</option>' in page
    assert '<option value="newest">Sort: Newest</option>' in page
    # Without a search there is nothing to match: no "Best match", newest first.
    page = client.get(LIST, {"sort": "relevance"}).content.decode()
    assert "Best match" not in page and '<option value="" selected>Sort: Newest</option>' in page


def test_search_results_bring_the_sort_choices_that_fit_them(alice: Any) -> None:
    personal(alice, "I prefer green tea")
    response = client_for(alice).get(LIST, {"q": "tea"}, headers=htmx("memory-results"))
    html = response.content.decode()
    assert '<select id="memory-sort" name="sort" hx-swap-oob="true">' in html
    assert '<option value="" selected>Sort: Best match</option>' in html


def test_search_by_words_only_when_meaning_cannot_be_searched(alice: Any) -> None:
    remember(alice, "The cluster uses kubernetes")
    with override_settings(MEMORY_EMBEDDING_DIMENSIONS=16):
        page = client_for(alice).get(LIST, {"q": "kubernet"}).content.decode()
    assert "<mark>kubernetes</mark>" in page
    assert "Searching by meaning is unavailable right now" in page


def test_no_results_offers_to_clear_filters(alice: Any) -> None:
    personal(alice, "I prefer green tea")
    page = client_for(alice).get(LIST, {"q": "coffee", "sort": "importance"}).content.decode()
    assert "No memories match this search or filter." in page
    assert 'href="/settings/memories?sort=importance"' in page


def test_empty_page_explains_how_memories_arrive(alice: Any) -> None:
    page = client_for(alice).get(LIST).content.decode()
    assert "No memories yet" in page
    assert "/remember" in page
    assert "automatic extraction" in page


def test_kind_and_scope_filters(alice: Any, project: Any) -> None:
    personal(alice, "Tea please", kind="preference")
    personal(alice, "Lives in Lyon", kind="fact")
    shared(project, alice, "Survey deadline is May", kind="goal")
    client = client_for(alice)
    page = client.get(LIST, {"kind": ["preference", "goal"]}).content.decode()
    assert "Tea please" in page and "Survey deadline" in page and "Lyon" not in page
    page = client.get(LIST, {"scope": "personal"}).content.decode()
    assert "Tea please" in page and "Lyon" in page and "Survey deadline" not in page
    page = client.get(LIST, {"scope": f"project:{project.slug}"}).content.decode()
    assert "Survey deadline" in page and "Tea please" not in page


def test_state_tabs_with_counts(alice: Any) -> None:
    personal(alice, "Active one")
    personal(alice, "Waiting one", status="pending")
    Memory.objects.filter(pk=personal(alice, "Faded one").pk).update(forgotten_at=timezone.now())
    Memory.objects.filter(pk=personal(alice, "Binned one").pk).update(deleted_at=timezone.now())
    client = client_for(alice)
    for state, shown in (
        ("active", "Active one"),
        ("pending", "Waiting one"),
        ("forgotten", "Faded one"),
        ("trash", "Binned one"),
    ):
        page = client.get(LIST, {"state": state}).content.decode()
        assert shown in page
        assert page.count("-one") == 0
        others = {"Active one", "Waiting one", "Faded one", "Binned one"} - {shown}
        assert not any(other in page for other in others), state
        assert '<span class="count">1</span>' in page
    summary = client.get(LIST).content.decode()
    assert "1 pending review" in summary
    assert "1 forgotten this week" in summary


def test_sorts(alice: Any) -> None:
    low = personal(alice, "Low importance", importance=0.2)
    high = personal(alice, "High importance", importance=0.95)
    used = personal(alice, "Often used", importance=0.5)
    Memory.objects.filter(pk=used.pk).update(access_count=9, last_accessed_at=timezone.now())
    client = client_for(alice)

    def order(sort: str) -> list[int]:
        page = client.get(LIST, {"sort": sort}).content.decode()
        positions = {m.pk: page.index(f'id="memory-{m.pk}"') for m in (low, high, used)}
        return sorted(positions, key=positions.__getitem__)

    assert order("newest") == [used.pk, high.pk, low.pk]
    assert order("importance") == [high.pk, used.pk, low.pk]
    assert order("most_used")[0] == used.pk
    assert order("last_used")[0] == used.pk


def test_twenty_per_page_and_load_more(alice: Any) -> None:
    for n in range(45):
        personal(alice, f"Memory number {n:02d}")
    client = client_for(alice)
    page = client.get(LIST).content.decode()
    assert page.count('class="memory-row') == 20
    assert "45 memories" in page
    assert "20 of 45 shown" in page
    assert 'href="/settings/memories?page=2"' in page
    fragment = client.get(LIST, {"page": 2}, headers=htmx("load-more")).content.decode()
    assert fragment.count('class="memory-row') == 20
    assert "Memory number 24" in fragment and "Memory number 25" not in fragment
    assert "40 of 45 shown" in fragment
    assert "<html" not in fragment
    # Without JavaScript the link shows the first two pages together.
    assert client.get(LIST, {"page": 2}).content.decode().count('class="memory-row') == 40
    last = client.get(LIST, {"page": 3}, headers=htmx("load-more")).content.decode()
    assert last.count('class="memory-row') == 5
    assert "Load more" not in last


def test_htmx_asks_for_one_part(alice: Any) -> None:
    personal(alice, "Tea please")
    client = client_for(alice)
    results = client.get(LIST, {"q": "tea"}, headers=htmx("memory-results")).content.decode()
    assert results.lstrip().startswith('<div id="memory-results"')
    tabs = client.get(LIST, headers=htmx("memory-tabs")).content.decode()
    assert tabs.lstrip().startswith('<div id="memory-tabs"')
    summary = client.get(LIST, headers=htmx("memory-summary")).content.decode()
    assert summary.lstrip().startswith('<p id="memory-summary"')


def test_viewer_sees_project_memories_without_write_actions(
    alice: Any, vera: Any, project: Any
) -> None:
    memory = shared(project, alice, "Survey deadline is May")
    page = client_for(vera).get(LIST).content.decode()
    assert "Survey deadline is May" in page
    assert f"/settings/memories/{memory.pk}/delete" not in page
    assert f"/settings/memories/{memory.pk}/history" in page


# Permissions of the actions ------------------------------------------------------

WRITE_ACTIONS = ("delete", "restore", "pin", "edit", "review")


@pytest.mark.parametrize("action", WRITE_ACTIONS)
def test_stranger_gets_404(action: str, alice: Any, charlie: Any) -> None:
    memory = personal(alice, "Alice's")
    response = client_for(charlie).post(f"{LIST}/{memory.pk}/{action}", {"content": "x"})
    assert response.status_code == 404
    assert reloaded(memory).revision == 1


@pytest.mark.parametrize("panel", ("history", "evidence", "edit"))
def test_stranger_cannot_read_panels(panel: str, alice: Any, charlie: Any) -> None:
    memory = personal(alice, "Alice's")
    assert client_for(charlie).get(f"{LIST}/{memory.pk}/{panel}").status_code == 404


@pytest.mark.parametrize("action", WRITE_ACTIONS)
def test_viewer_gets_403(action: str, alice: Any, vera: Any, project: Any) -> None:
    memory = shared(project, alice, "Shared")
    response = client_for(vera).post(f"{LIST}/{memory.pk}/{action}", {"content": "x"})
    assert response.status_code == 403
    assert reloaded(memory).revision == 1


def test_member_may_change_project_memories(alice: Any, bob: Any, project: Any) -> None:
    memory = shared(project, alice, "Shared")
    response = client_for(bob).post(f"{LIST}/{memory.pk}/delete", {"next": LIST})
    assert response.status_code == 302
    assert reloaded(memory).deleted_at is not None


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/{pk}/delete"),
        ("get", "/{pk}/restore"),
        ("get", "/{pk}/pin"),
        ("get", "/{pk}/review"),
        ("get", "/add"),
        ("get", "/bulk"),
        ("get", "/undo"),
        ("get", "/settings"),
        ("post", "/{pk}/history"),
        ("post", "/{pk}/evidence"),
        ("post", ""),
        ("put", "/{pk}/edit"),
        ("delete", "/clear"),
    ],
)
def test_wrong_method_gets_405(method: str, path: str, alice: Any) -> None:
    memory = personal(alice, "Mine")
    response = getattr(client_for(alice), method)(LIST + path.format(pk=memory.pk))
    assert response.status_code == 405


def test_bulk_on_a_viewers_project_is_refused(alice: Any, vera: Any, project: Any) -> None:
    memory = shared(project, alice, "Shared")
    response = client_for(vera).post(
        f"{LIST}/bulk", {"ids": [memory.pk], "action": "delete", "next": LIST}
    )
    assert response.status_code == 403
    assert reloaded(memory).deleted_at is None


def test_undo_of_someone_elses_batch_is_404(alice: Any, bob: Any, project: Any) -> None:
    memory = shared(project, alice, "Shared")
    client_for(alice).post(f"{LIST}/{memory.pk}/delete")
    batch = MemoryEvent.objects.get(memory=memory, action="deleted").batch
    assert client_for(bob).post(f"{LIST}/undo", {"batch": str(batch)}).status_code == 404
    assert client_for(bob).post(f"{LIST}/undo", {"batch": "not-a-uuid"}).status_code == 404
    assert reloaded(memory).deleted_at is not None


def test_next_never_leaves_the_site(alice: Any) -> None:
    memory = personal(alice, "Mine")
    response = client_for(alice).post(
        f"{LIST}/{memory.pk}/pin", {"pinned": "1", "next": "https://evil.example/"}
    )
    assert response["Location"] == LIST


# Actions without JavaScript -------------------------------------------------------


def test_delete_then_undo_without_javascript(alice: Any) -> None:
    memory = personal(alice, "Tea please")
    client = client_for(alice)
    response = client.post(f"{LIST}/{memory.pk}/delete", {"next": f"{LIST}?q=tea"}, follow=True)
    assert response.redirect_chain == [(f"{LIST}?q=tea", 302)]
    page = response.content.decode()
    assert "Memory deleted." in page
    assert reloaded(memory).deleted_at is not None
    assert f'id="memory-{memory.pk}"' not in page
    batch = MemoryEvent.objects.get(memory=memory, action="deleted").batch
    assert f'value="{batch}"' in page  # the undo offer
    undone = client.post(f"{LIST}/undo", {"batch": str(batch), "next": LIST}, follow=True)
    assert "Undone: 1 memory is back as it was." in undone.content.decode()
    assert reloaded(memory).deleted_at is None
    assert "Tea please" in undone.content.decode()


def test_restore_from_trash_and_forgotten(alice: Any) -> None:
    trashed = personal(alice, "Binned")
    faded = personal(alice, "Faded")
    Memory.objects.filter(pk=trashed.pk).update(deleted_at=timezone.now())
    Memory.objects.filter(pk=faded.pk).update(forgotten_at=timezone.now())
    client = client_for(alice)
    page = client.get(LIST, {"state": "trash"}).content.decode()
    assert f"{LIST}/{trashed.pk}/restore" in page
    for memory in (trashed, faded):
        response = client.post(f"{LIST}/{memory.pk}/restore", {"next": LIST}, follow=True)
        assert "Memory restored." in response.content.decode()
        assert reloaded(memory).state == "active"
    assert MemoryEvent.objects.filter(action="restored", actor=alice).count() == 2


def test_pin_and_unpin(alice: Any) -> None:
    memory = personal(alice, "Always use metric units")
    client = client_for(alice)
    client.post(f"{LIST}/{memory.pk}/pin", {"pinned": "1"})
    assert reloaded(memory).pinned
    client.post(f"{LIST}/{memory.pk}/pin", {"pinned": "0"})
    assert not reloaded(memory).pinned
    assert list(memory.events.values_list("action", flat=True)) == ["unpinned", "pinned", "created"]


def test_accept_and_reject_pending(alice: Any) -> None:
    accepted = personal(alice, "Maybe true", status="pending")
    rejected = personal(alice, "Maybe false", status="pending")
    client = client_for(alice)
    client.post(f"{LIST}/{accepted.pk}/review", {"decision": "accept"})
    client.post(f"{LIST}/{rejected.pk}/review", {"decision": "reject"})
    assert reloaded(accepted).status == "active"
    assert reloaded(rejected).status == "rejected"


def test_add_personal_and_project_memory(alice: Any, project: Any) -> None:
    client = client_for(alice)
    client.post(
        f"{LIST}/add", {"content": "  Likes jazz  ", "kind": "preference", "where": "personal"}
    )
    client.post(
        f"{LIST}/add", {"content": "Uses CGCS2000", "kind": "fact", "where": str(project.pk)}
    )
    mine = Memory.objects.get(content="Likes jazz")
    assert (mine.scope, mine.kind, mine.origin, mine.owner) == (
        "user",
        "preference",
        "manual",
        alice,
    )
    theirs = Memory.objects.get(content="Uses CGCS2000")
    assert (theirs.scope, theirs.project) == ("project", project)
    assert theirs.events.get().actor == alice


def test_add_refuses_bad_input_and_keeps_it(alice: Any, vera: Any, project: Any) -> None:
    response = client_for(alice).post(
        f"{LIST}/add", {"content": "   ", "kind": "fact", "where": "personal"}
    )
    assert response.status_code == 400
    assert "Write what should be remembered." in response.content.decode()
    response = client_for(alice).post(
        f"{LIST}/add", {"content": "x" * 2001, "kind": "fact", "where": "personal"}
    )
    assert response.status_code == 400
    assert "x" * 2001 in response.content.decode()
    # A viewer may not add to the project: it is not even a choice.
    response = client_for(vera).post(
        f"{LIST}/add", {"content": "Sneaky", "kind": "fact", "where": str(project.pk)}
    )
    assert response.status_code == 400
    assert not Memory.objects.exists()


def test_edit_saves_every_field(alice: Any) -> None:
    memory = personal(alice, "Old text", kind="fact")
    response = client_for(alice).post(
        f"{LIST}/{memory.pk}/edit",
        {
            "content": "New text",
            "kind": "lesson",
            "importance": "35",
            "tags": "Work, #travel, work",
            "pinned": "on",
            "revision": "1",
            "next": LIST,
        },
    )
    assert response.status_code == 302
    memory = reloaded(memory)
    assert (memory.content, memory.kind, memory.importance, memory.tags, memory.pinned) == (
        "New text",
        "lesson",
        0.35,
        ["work", "travel"],
        True,
    )
    assert memory.revision == 2


def test_edit_validation(alice: Any) -> None:
    memory = personal(alice, "Old text")
    response = client_for(alice).post(
        f"{LIST}/{memory.pk}/edit",
        {"content": "", "kind": "nonsense", "importance": "140", "revision": "1"},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "Write what should be remembered." in page
    assert "Ensure this value is less than or equal to 100." in page
    assert reloaded(memory).content == "Old text"


def test_stale_edit_keeps_both_versions(alice: Any) -> None:
    memory = personal(alice, "Original")
    memory_update(
        memory=memory, changes={"content": "Changed elsewhere"}, expected_revision=1, actor=None
    )
    data = {"content": "My version", "kind": "fact", "importance": "80", "revision": "1"}
    for headers in ({}, htmx()):
        response = client_for(alice).post(f"{LIST}/{memory.pk}/edit", data, headers=headers)
        assert response.status_code == 409
        page = response.content.decode()
        assert "changed somewhere else" in page
        assert "My version</textarea>" in page
        assert "Changed elsewhere" in page
        assert 'name="revision" value="2"' in page
    assert reloaded(memory).content == "Changed elsewhere"
    # Saving again on purpose replaces the current version.
    client_for(alice).post(f"{LIST}/{memory.pk}/edit", {**data, "revision": "2"})
    assert reloaded(memory).content == "My version"


def test_edit_page_without_javascript(alice: Any) -> None:
    memory = personal(alice, "Old text")
    page = client_for(alice).get(f"{LIST}/{memory.pk}/edit", {"next": f"{LIST}?q=old"})
    assert page.status_code == 200
    assert "Old text</textarea>" in page.content.decode()
    assert 'value="/settings/memories?q=old"' in page.content.decode()


def test_history_shows_who_when_before_and_after(alice: Any) -> None:
    memory = personal(alice, "Tea")
    client = client_for(alice)
    client.post(
        f"{LIST}/{memory.pk}/edit",
        {"content": "Green tea", "kind": "preference", "importance": "90", "revision": "1"},
    )
    client.post(f"{LIST}/{memory.pk}/delete")
    page = client.get(f"{LIST}/{memory.pk}/history").content.decode()
    for text in (
        "Created",
        "Edited",
        "Deleted",
        "alice",
        "Green tea",
        "Preference",
        "Fact",
        "In trash since",
    ):
        assert text in page, text
    panel = client.get(f"{LIST}/{memory.pk}/history", headers=htmx()).content.decode()
    assert "<html" not in panel and "Green tea" in panel


def test_evidence_highlights_the_quote_in_own_messages(alice: Any, bob: Any, project: Any) -> None:
    conversation = Conversation.objects.create(owner=alice, external_id="c1")
    message = Message.objects.create(
        conversation=conversation,
        role="user",
        external_id="m1",
        position=1,
        content="Well, <we> always use WGS84 for the survey.",
    )
    memory = shared(
        project,
        alice,
        "The survey uses WGS84",
        evidence=[{"message_ids": [message.pk], "quote": "always use WGS84"}],
    )
    page = client_for(alice).get(f"{LIST}/{memory.pk}/evidence").content.decode()
    assert "Well, &lt;we&gt; <mark>always use WGS84</mark> for the survey." in page
    # Bob sees the quote, not the rest of Alice's conversation.
    page = client_for(bob).get(f"{LIST}/{memory.pk}/evidence").content.decode()
    assert "<mark>always use WGS84</mark>" in page
    assert "Well," not in page


def test_bulk_delete_restore_and_change_kind_with_undo(alice: Any) -> None:
    first = personal(alice, "First", kind="fact")
    second = personal(alice, "Second", kind="fact")
    third = personal(alice, "Third", kind="fact")
    client = client_for(alice)
    response = client.post(
        f"{LIST}/bulk",
        {"ids": [first.pk, second.pk], "action": "kind:goal", "next": LIST},
        follow=True,
    )
    assert "2 memories changed kind." in response.content.decode()
    assert [reloaded(m).kind for m in (first, second, third)] == ["goal", "goal", "fact"]
    client.post(f"{LIST}/bulk", {"ids": [first.pk, third.pk], "action": "delete", "next": LIST})
    assert (
        reloaded(first).deleted_at
        and reloaded(third).deleted_at
        and not reloaded(second).deleted_at
    )
    client.post(
        f"{LIST}/bulk", {"all_matching": "1", "action": "restore", "next": f"{LIST}?state=trash"}
    )
    assert not reloaded(first).deleted_at and not reloaded(third).deleted_at
    batch = MemoryEvent.objects.filter(action="edited").first().batch
    client.post(f"{LIST}/undo", {"batch": str(batch)})
    assert [reloaded(m).kind for m in (first, second)] == ["fact", "fact"]


def test_bulk_all_matching_follows_the_filters(alice: Any) -> None:
    tea = personal(alice, "Green tea", kind="preference")
    coffee = personal(alice, "Black coffee", kind="preference")
    client_for(alice).post(
        f"{LIST}/bulk", {"all_matching": "1", "action": "delete", "next": f"{LIST}?q=tea"}
    )
    assert reloaded(tea).deleted_at is not None
    assert reloaded(coffee).deleted_at is None


def test_bulk_refuses_empty_selection_and_unknown_action(alice: Any) -> None:
    memory = personal(alice, "Keep me")
    client = client_for(alice)
    page = client.post(
        f"{LIST}/bulk", {"action": "delete", "next": LIST}, follow=True
    ).content.decode()
    assert "Select at least one memory first." in page
    response = client.post(
        f"{LIST}/bulk", {"ids": [memory.pk], "action": "explode"}, headers=htmx()
    )
    assert response.status_code == 422
    assert "Choose what to do" in response.content.decode()
    assert reloaded(memory).deleted_at is None


def test_clear_all_names_the_count_and_undoes_exactly_that_batch(alice: Any, project: Any) -> None:
    mine = [personal(alice, f"Mine {n}") for n in range(3)]
    already = personal(alice, "Already binned")
    Memory.objects.filter(pk=already.pk).update(deleted_at=timezone.now())
    team_memory = shared(project, alice, "Shared stays")
    client = client_for(alice)
    page = client.get(f"{LIST}/clear").content.decode()
    assert "This moves 3 personal memories to the trash." in page
    # A stale confirmation is refused and shows the new number.
    response = client.post(f"{LIST}/clear", {"count": "2"})
    assert response.status_code == 409
    assert all(reloaded(m).deleted_at is None for m in mine)
    client.post(f"{LIST}/clear", {"count": "3", "next": LIST})
    assert all(reloaded(m).deleted_at for m in mine)
    assert reloaded(team_memory).deleted_at is None
    batch = MemoryEvent.objects.get(memory=mine[0], action="deleted").batch
    client.post(f"{LIST}/undo", {"batch": str(batch)})
    assert all(reloaded(m).deleted_at is None for m in mine)
    assert reloaded(already).deleted_at is not None


def test_memory_settings_and_the_off_banner(alice: Any) -> None:
    client = client_for(alice)
    assert "Memory is off." not in client.get(LIST).content.decode()
    response = client.post(f"{LIST}/settings", {"auto_extract": "on", "next": LIST}, follow=True)
    page = response.content.decode()
    assert "Memory settings saved." in page
    assert "Memory is off." in page
    assert "nothing is injected" in page
    settings = MemorySettings.for_user(alice)
    assert (
        settings.memory_enabled,
        settings.auto_extract,
        settings.review_extracted,
        settings.show_citations,
    ) == (
        False,
        True,
        False,
        False,
    )
    response = client.post(f"{LIST}/settings", {"memory_enabled": "on"}, headers=htmx())
    assert 'id="memory-off-banner" hx-swap-oob="true"' in response.content.decode()
    assert "Memory is off." not in response.content.decode()
    assert MemorySettings.for_user(alice).memory_enabled


# Actions with HTMX -------------------------------------------------------------------


def test_htmx_delete_leaves_an_empty_place_and_a_toast_with_undo(alice: Any) -> None:
    memory = personal(alice, "Tea please")
    response = client_for(alice).post(f"{LIST}/{memory.pk}/delete", headers=htmx())
    page = response.content.decode()
    # The new toast replaces any earlier one, which would speak of another action.
    assert 'hx-swap-oob="innerHTML:#toasts"' in page
    assert "Memory deleted." in page and "Undo" in page
    # The last row left the Active tab: the answer brings the list in its empty state.
    assert '<div id="memory-results" class="results" hx-swap-oob="true">' in page
    assert "No active memories." in page
    assert response["HX-Trigger"] == '{"memories-changed": {}}'


def test_htmx_pin_returns_the_row_with_the_search_highlighted(alice: Any) -> None:
    memory = personal(alice, "Green tea")
    response = client_for(alice).post(
        f"{LIST}/{memory.pk}/pin", {"pinned": "1"}, headers=htmx(current=f"{LIST}?q=tea")
    )
    page = response.content.decode()
    assert page.lstrip().startswith(
        f'<li id="memory-{memory.pk}" class="memory-row state-active is-pinned'
    )
    assert "Green <mark>tea</mark>" in page
    assert "Pinned." in page


def test_htmx_undo_and_bulk_reload_the_list(alice: Any) -> None:
    memory = personal(alice, "Tea")
    client = client_for(alice)
    client.post(f"{LIST}/{memory.pk}/delete", headers=htmx())
    batch = MemoryEvent.objects.get(action="deleted").batch
    response = client.post(f"{LIST}/undo", {"batch": str(batch)}, headers=htmx())
    # The list reloads with the pages already loaded: an undo may bring rows back on any.
    assert response["HX-Trigger"] == '{"memories-reload": {}}'
    assert "Undone" in response.content.decode()


def test_htmx_add_returns_a_fresh_form(alice: Any) -> None:
    response = client_for(alice).post(
        f"{LIST}/add",
        {"content": "Likes jazz", "kind": "fact", "where": "personal"},
        headers=htmx(),
    )
    page = response.content.decode()
    assert page.lstrip().startswith('<form id="memory-add"')
    assert "Likes jazz" not in page.split("<div hx-swap-oob")[0]
    assert "Memory added." in page
    response = client_for(alice).post(
        f"{LIST}/add", {"content": "", "kind": "fact", "where": "personal"}, headers=htmx()
    )
    assert response.status_code == 422
    assert "Write what should be remembered." in response.content.decode()


# Languages -----------------------------------------------------------------------------


def test_chinese_from_the_browser_and_from_the_switch(alice: Any) -> None:
    memory = personal(alice, "Tea")
    Memory.objects.filter(pk=memory.pk).update(created_at=timezone.now() - timedelta(days=3))
    client = client_for(alice)
    page = client.get(LIST, headers={"Accept-Language": "zh-CN,zh;q=0.9"}).content.decode()
    assert "记忆" in page
    assert "3\xa0日前" in page
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": LIST})
    page = client.get(LIST).content.decode()
    assert "记忆设置" in page
    client.post("/i18n/setlang/", {"language": "en", "next": LIST})
    assert "Memory settings" in client.get(LIST).content.decode()
