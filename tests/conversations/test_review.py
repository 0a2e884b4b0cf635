from __future__ import annotations

from typing import Any

import pytest

from accounts.models import MemorySettings
from conversations.extraction.runs import execute_run, extraction_request
from memories.models import Memory, Status
from memories.services import memory_create
from tests.conftest import client_for, make_user
from tests.extraction_helpers import conversation_with

pytestmark = pytest.mark.django_db


def _pending(owner: Any, *turns: tuple[str, str], **fields: Any) -> list[Memory]:
    MemorySettings.objects.filter(user=owner).update(review_extracted=True)
    conversation = conversation_with(owner, *turns, **fields)
    execute_run(extraction_request(conversation=conversation, trigger="manual").pk)
    return list(Memory.objects.filter(conversation=conversation, status=Status.PENDING))


def test_review_page_shows_evidence_with_the_quote_highlighted(alice: Any) -> None:
    [memory] = _pending(alice, ("user", "Hello! I prefer Vue over <b>React</b>. Thanks"))
    page = client_for(alice).get("/review/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "Prefers Vue over &lt;b&gt;React&lt;/b&gt;" in html
    assert "Hello! <mark>I prefer Vue over &lt;b&gt;React&lt;/b&gt;.</mark> Thanks" in html
    assert f'action="/review/{memory.pk}/accept"' in html


def test_review_page_shows_what_would_be_superseded(alice: Any) -> None:
    memory_create(owner=alice, content="Prefers Vue", kind="preference")
    Memory.objects.update(metadata={"subject": "preference:frontend framework", "value": "vue"})
    _pending(alice, ("user", "I now prefer React"))
    html = client_for(alice).get("/review/").content.decode()
    assert "Would replace:" in html and "<del>Prefers Vue</del>" in html


def test_accept_reject_and_edit_with_plain_posts(alice: Any) -> None:
    first, second, third = _pending(
        alice, ("user", "I prefer Vue. We use pytest for tests. I plan to learn Rust.")
    )
    client = client_for(alice)
    assert client.post(f"/review/{first.pk}/accept").status_code == 302
    assert client.post(f"/review/{second.pk}/reject").status_code == 302
    edited = client.post(
        f"/review/{third.pk}/edit", {"content": "Learning Rust in 2025", "kind": "goal"}
    )
    assert edited.status_code == 302
    states = {m.pk: (m.status, m.content) for m in Memory.objects.all()}
    assert states[first.pk][0] == Status.ACTIVE
    assert states[second.pk][0] == Status.REJECTED
    assert states[third.pk] == (Status.ACTIVE, "Learning Rust in 2025")


def test_htmx_actions_return_the_row(alice: Any) -> None:
    [memory] = _pending(alice, ("user", "I prefer Vue over React"))
    response = client_for(alice).post(f"/review/{memory.pk}/accept", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "Accepted:</strong> Prefers Vue over React" in response.content.decode()


def test_edit_with_empty_content_is_refused_and_changes_nothing(alice: Any) -> None:
    [memory] = _pending(alice, ("user", "I prefer Vue over React"))
    response = client_for(alice).post(
        f"/review/{memory.pk}/edit", {"content": " ", "kind": "goal"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 422
    assert "Write the memory" in response.content.decode()
    memory.refresh_from_db()
    assert (memory.status, memory.content) == (Status.PENDING, "Prefers Vue over React")


def test_bulk_accept_and_reject(alice: Any) -> None:
    memories = _pending(
        alice, ("user", "I prefer Vue. We use pytest for tests. I plan to learn Rust.")
    )
    client = client_for(alice)
    client.post("/review/bulk", {"action": "accept", "ids": [memories[0].pk, memories[1].pk]})
    client.post("/review/bulk", {"action": "reject", "ids": [memories[2].pk]})
    assert sorted(Memory.objects.values_list("status", flat=True)) == [
        "active",
        "active",
        "rejected",
    ]


def test_project_admins_review_their_projects_members_and_strangers_do_not(
    alice: Any, bob: Any, charlie: Any, project: Any
) -> None:
    [memory] = _pending(bob, ("user", "The project uses WGS84 for coordinates"), project=project)
    assert memory.scope == "project"
    assert memory.content in client_for(alice).get("/review/").content.decode()
    assert memory.content not in client_for(charlie).get("/review/").content.decode()
    assert client_for(charlie).post(f"/review/{memory.pk}/accept").status_code == 404
    vera_like = bob  # a member who may write but not manage
    assert client_for(vera_like).post(f"/review/{memory.pk}/reject").status_code == 403
    assert client_for(alice).post(f"/review/{memory.pk}/accept").status_code == 302
    memory.refresh_from_db()
    assert memory.status == Status.ACTIVE


def test_staff_review_everything(alice: Any) -> None:
    [memory] = _pending(alice, ("user", "I prefer Vue over React"))
    staff = make_user("staff@example.com", is_staff=True)
    assert memory.content in client_for(staff).get("/review/").content.decode()


def test_review_needs_login_and_post(alice: Any) -> None:
    from django.test import Client

    assert Client().get("/review/").status_code == 302
    assert client_for(alice).get("/review/1/accept").status_code == 405


def test_admin_actions_accept_and_reject(alice: Any) -> None:
    first, second = _pending(alice, ("user", "I prefer Vue. We use pytest for tests."))
    admin = make_user("admin@example.com", is_staff=True, is_superuser=True)
    client = client_for(admin)
    url = "/admin/memoryapp/memory/"
    client.post(url, {"action": "accept_pending", "_selected_action": [first.pk]})
    client.post(url, {"action": "reject_pending", "_selected_action": [second.pk]})
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, second.status) == (Status.ACTIVE, Status.REJECTED)
    assert (
        client.get("/admin/conversations/extractionrun/?status__exact=succeeded").status_code == 200
    )
    assert client.get("/admin/memoryapp/forgettingreport/").status_code == 200


# The settings page reviews by the same rule and through the same service -----------


def test_a_member_may_review_a_project_memory_nowhere(alice: Any, bob: Any, project: Any) -> None:
    """The review page and the settings page agree: a project's owners and admins review."""
    [memory] = _pending(bob, ("user", "The project uses WGS84 for coordinates"), project=project)
    member = client_for(bob)
    assert member.post(f"/review/{memory.pk}/accept").status_code == 403
    settings_review = member.post(f"/settings/memories/{memory.pk}/review", {"decision": "accept"})
    assert settings_review.status_code == 403
    memory.refresh_from_db()
    assert memory.status == Status.PENDING
    page = member.get("/settings/memories", {"state": "pending"}).content.decode()
    assert f"/settings/memories/{memory.pk}/review" not in page
    owner = client_for(alice)
    assert (
        f"/settings/memories/{memory.pk}/review"
        in owner.get("/settings/memories", {"state": "pending"}).content.decode()
    )
    assert (
        owner.post(f"/settings/memories/{memory.pk}/review", {"decision": "accept"}).status_code
        == 302
    )
    memory.refresh_from_db()
    assert memory.status == Status.ACTIVE


def test_accepting_on_the_settings_page_supersedes_what_the_memory_contradicts(
    alice: Any,
) -> None:
    from recall.injection import PreviewRequest, injection_preview

    old = memory_create(owner=alice, content="Prefers Vue", kind="preference")
    Memory.objects.update(metadata={"subject": "preference:frontend framework", "value": "vue"})
    [new] = _pending(alice, ("user", "I now prefer React"))
    assert new.metadata.get("supersedes") == old.pk
    response = client_for(alice).post(f"/settings/memories/{new.pk}/review", {"decision": "accept"})
    assert response.status_code == 302
    old.refresh_from_db()
    new.refresh_from_db()
    assert new.status == Status.ACTIVE
    assert old.superseded_by_id == new.pk and old.valid_until is not None
    preview = injection_preview(alice, PreviewRequest(message="frontend framework"))
    contents = [m["content"] for m in preview["memories"]]
    assert new.content in contents and old.content not in contents


def test_an_archived_projects_pending_memories_wait_until_it_is_active_again(
    alice: Any, bob: Any, project: Any
) -> None:
    [memory] = _pending(bob, ("user", "The project uses WGS84 for coordinates"), project=project)
    project.set_archived(True)
    owner = client_for(alice)
    assert memory.content not in owner.get("/review/").content.decode()
    assert owner.post(f"/review/{memory.pk}/accept").status_code == 403
    assert (
        owner.post(f"/settings/memories/{memory.pk}/review", {"decision": "accept"}).status_code
        == 403
    )
    project.set_archived(False)
    assert owner.post(f"/review/{memory.pk}/accept").status_code == 302


def test_the_heading_counts_what_is_left_after_each_verdict(alice: Any) -> None:
    first, second = _pending(alice, ("user", "I prefer Vue. We use pytest for tests."))
    client = client_for(alice)
    assert "2 memories await review." in client.get("/review/").content.decode()

    accepted = client.post(f"/review/{first.pk}/accept", HTTP_HX_REQUEST="true").content.decode()
    assert 'id="review-summary" class="review-summary" hx-swap-oob="true"' in accepted
    assert "1 memory awaits review." in accepted

    rejected = client.post(f"/review/{second.pk}/reject", HTTP_HX_REQUEST="true").content.decode()
    assert "await" not in rejected
    assert "Nothing to review." in rejected


def test_an_empty_queue_says_only_nothing_to_review(alice: Any) -> None:
    html = client_for(alice).get("/review/").content.decode()
    assert "Nothing to review." in html
    assert "0 memories" not in html and "await review" not in html
    assert "Keyboard:" not in html


def test_a_memory_extracted_seconds_ago_is_just_now(alice: Any) -> None:
    _pending(alice, ("user", "I prefer Vue over React"))
    html = client_for(alice).get("/review/").content.decode()
    assert "just now" in html
    assert "0\xa0minutes" not in html and "0 minutes" not in html


def test_keyboard_hints_are_hidden_on_touch_screens() -> None:
    from django.conf import settings

    css = (settings.BASE_DIR / "static/css/app.css").read_text()
    hover_none = css.split("@media (hover: none)")[1].split("}")[0]
    assert ".keyboard-hint" in hover_none
    template = (
        settings.BASE_DIR / "templates/conversations/partials/review_summary.html"
    ).read_text()
    assert 'class="help keyboard-hint"' in template
