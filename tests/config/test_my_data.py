"""/settings/data: the archive of everything of mine (and nothing of others), and erasing
my account (everything of mine goes, nothing of others; teams I alone own are handed over
or deleted)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from accounts.models import ApiToken, MemorySettings
from conversations.models import Conversation, Message
from memories.models import Memory, MemoryEvent
from memories.services import memory_create, memory_update
from recall.models import AccessLog
from teams.models import Invitation, Membership, Project, Role, Team
from tests.conftest import client_for, make_user
from tests.trust_helpers import columns_holding

pytestmark = pytest.mark.django_db

PAGE = "/settings/data"


def data_of(owner: Any, tag: str, project: Project | None = None) -> dict[str, Any]:
    """A memory with history, a project memory, a conversation with messages, a log row
    and a token, each carrying ``tag`` in its text."""
    memory = memory_create(owner=owner, content=f"{tag} personal memory", actor=owner)
    memory_update(
        memory=memory,
        changes={"content": f"{tag} personal memory, edited"},
        expected_revision=None,
        actor=owner,
    )
    conversation = Conversation.objects.create(
        owner=owner, external_id=f"{tag}-chat", title=f"{tag} chat", client=f"{tag} app"
    )
    message = Message.objects.create(
        conversation=conversation,
        role="user",
        content=f"{tag} said this in a chat",
        external_id="m1",
        position=1,
    )
    extracted = memory_create(
        owner=owner,
        content=f"{tag} extracted memory",
        conversation=conversation,
        origin="extracted",
        evidence=[{"message_ids": [message.pk], "quote": f"{tag} said this"}],
    )
    shared = None
    if project is not None:
        shared = memory_create(
            owner=owner,
            content=f"{tag} project memory",
            scope="project",
            project=project,
            actor=owner,
            evidence=[{"message_ids": [message.pk], "quote": f"{tag} quote in project"}],
        )
    AccessLog.objects.create(
        user=owner, client=f"{tag} app", memory_ids=[memory.pk], conversation=conversation
    )
    ApiToken.issue(user=owner, name=f"{tag} token")
    return {"memory": memory, "extracted": extracted, "shared": shared, "message": message}


def archive(user: Any) -> tuple[dict[str, Any], str]:
    response = client_for(user).get(f"{PAGE}/export")
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment;")
    text = response.content.decode()
    return json.loads(text), text


def test_page_requires_log_in_and_explains(client: Any, alice: Any) -> None:
    for url in (PAGE, f"{PAGE}/export"):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response.url
    response = client.post(f"{PAGE}/erase", {"email": "alice@example.com"})
    assert response.status_code == 302 and "/accounts/login/" in response.url
    page = client_for(alice).get(PAGE).content.decode()
    assert "Download my data" in page
    assert "Memories that other members created in your projects" in page
    assert "Type your email address, alice@example.com, to confirm" in page


def test_archive_holds_everything_of_mine_and_nothing_of_others(
    alice: Any, bob: Any, project: Project
) -> None:
    mine = data_of(alice, "ALICE", project)
    data_of(bob, "BOBBY", project)
    # Bob edits Alice's project memory: the history keeps the change, not his name.
    assert mine["shared"] is not None
    memory_update(
        memory=mine["shared"],
        changes={"pinned": True},
        expected_revision=None,
        actor=bob,
    )
    data, text = archive(alice)
    assert "BOBBY" not in text
    assert "bob" not in text.lower()
    assert data["account"]["email"] == "alice@example.com"
    assert data["settings"]["memory_enabled"] is True
    contents = {memory["content"] for memory in data["memories"]}
    assert contents == {
        "ALICE personal memory, edited",
        "ALICE extracted memory",
        "ALICE project memory",
    }
    personal = next(m for m in data["memories"] if m["content"].endswith("edited"))
    assert [event["action"] for event in personal["history"]] == ["created", "edited"]
    assert personal["history"][1]["before"]["content"] == "ALICE personal memory"
    assert personal["history"][1]["by"] == "you"
    shared = next(m for m in data["memories"] if m["scope"] == "project")
    assert shared["project"] == "Track Survey"
    assert shared["history"][-1]["by"] == "another member"
    [conversation] = data["conversations"]
    assert conversation["app"] == "ALICE app"
    assert conversation["messages"][0]["content"] == "ALICE said this in a chat"
    assert data["access_log"][0]["app"] == "ALICE app"
    assert data["api_tokens"][0]["name"] == "ALICE token"
    assert "token_hash" not in text
    assert data["teams"] == [
        {"team": "Rail Team", "role": "owner", "since": data["teams"][0]["since"]}
    ]


def test_erase_needs_the_email_typed(alice: Any) -> None:
    response = client_for(alice).post(f"{PAGE}/erase", {"email": "someone@example.com"})
    assert response.status_code == 400
    assert "Type your email address exactly" in response.content.decode()
    assert get_user_model().objects.filter(pk=alice.pk).exists()


def _counts_of(user: Any) -> dict[str, int]:
    return {
        "memories": Memory.objects.filter(owner=user).count(),
        "events": MemoryEvent.objects.filter(memory__owner=user).count(),
        "conversations": Conversation.objects.filter(owner=user).count(),
        "messages": Message.objects.filter(conversation__owner=user).count(),
        "log": AccessLog.objects.filter(user=user).count(),
        "tokens": ApiToken.objects.filter(user=user).count(),
        "memberships": Membership.objects.filter(user=user).count(),
    }


def test_erase_removes_everything_of_mine_and_nothing_of_others(
    alice: Any, bob: Any, charlie: Any, project: Project
) -> None:
    """alice owns Rail Team (bob a member, vera a viewer): it goes to bob, the member before
    the viewer. Her own one-person team is deleted. Her project memory stays, now bob's."""
    mine = data_of(alice, "ALICE", project)
    data_of(bob, "BOBBY", project)
    data_of(charlie, "CHARL")
    solo = Team.objects.create(name="Solo Team")
    Membership.objects.create(team=solo, user=alice, role=Role.OWNER)
    solo_project = Project.objects.create(team=solo, name="Solo project")
    memory_create(owner=alice, content="ALICE solo memory", scope="project", project=solo_project)
    Invitation.objects.create(team=project.team, email="alice@example.com", invited_by=bob)
    others_before = {user.pk: _counts_of(user) for user in (charlie,)}
    bob_before = _counts_of(bob)

    client = client_for(alice)
    page = client.get(PAGE).content.decode()
    assert "Rail Team goes to bob (Member), who becomes its owner." in page
    assert "Solo Team has no other members" in page
    response = client.post(f"{PAGE}/erase", {"email": "ALICE@example.com"})

    assert response.status_code == 302
    assert not get_user_model().objects.filter(pk=alice.pk).exists()
    assert not MemorySettings.objects.filter(user_id=alice.pk).exists()
    assert not Team.objects.filter(pk=solo.pk).exists()
    assert Membership.objects.get(team=project.team, user=bob).role == Role.OWNER
    assert not Invitation.objects.filter(email__iexact="alice@example.com").exists()
    # Her project memory stays with the project, in the new owner's name, without her quotes.
    assert mine["shared"] is not None
    shared = Memory.objects.get(pk=mine["shared"].pk)
    assert (shared.owner_id, shared.evidence) == (bob.pk, [])
    for text in (
        "ALICE personal memory",
        "ALICE extracted",
        "ALICE said this",
        "ALICE app",
        "ALICE token",
        "ALICE solo",
        "ALICE quote",
        "alice@example.com",
    ):
        assert columns_holding(text) == [], text
    # Nothing of the others went: bob has his own plus the handed-over memory.
    assert _counts_of(charlie) == others_before[charlie.pk]
    bob_after = _counts_of(bob)
    assert bob_after["memories"] == bob_before["memories"] + 1
    assert {k: v for k, v in bob_after.items() if k not in ("memories", "events")} == {
        k: v for k, v in bob_before.items() if k not in ("memories", "events")
    }
    assert Memory.objects.filter(content__startswith="BOBBY").count() == 3
    assert Memory.objects.filter(content__startswith="CHARL").count() == 2


def test_a_team_with_another_owner_is_left_as_it_is(alice: Any, bob: Any, team: Team) -> None:
    Membership.objects.filter(team=team, user=bob).update(role=Role.OWNER)
    other = make_user("zed@example.com")
    Membership.objects.create(team=team, user=other, role=Role.ADMIN)
    client_for(alice).post(f"{PAGE}/erase", {"email": "alice@example.com"})
    assert Membership.objects.get(team=team, user=other).role == Role.ADMIN
    assert Team.objects.filter(pk=team.pk).exists()
