"""Scoped, pausable, expiring API tokens: one check for the JSON API, MCP and the proxy."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import ApiToken
from memories.models import Memory, Scope
from tests.conftest import client_for
from tests.recall_helpers import remember

pytestmark = pytest.mark.django_db


def token_client(user: Any, **options: Any) -> tuple[ApiToken, Client]:
    token, secret = ApiToken.issue(user=user, name="scoped app", **options)
    return token, Client(headers={"Authorization": f"Bearer {secret}"})


def call(client: Client, kind: str, memory: Memory) -> Any:
    """A representative endpoint of each kind."""
    if kind == "read":
        return client.get("/api/v1/memories/search", {"q": "tabs"})
    if kind == "preview":
        return client.post(
            "/api/v1/injection-preview", {"message": "tabs?"}, content_type="application/json"
        )
    if kind == "write":
        return client.patch(
            f"/api/v1/memories/{memory.pk}",
            json.dumps({"revision": memory.revision, "content": "Prefers spaces"}),
            content_type="application/json",
        )
    if kind == "command":
        return client.post(
            "/api/v1/commands", {"command": "/remember Likes tea"}, content_type="application/json"
        )
    return client.post(
        "/api/v1/conversations", {"external_id": "chat-1"}, content_type="application/json"
    )


KIND_SCOPE = {
    "read": "read",
    "preview": "read",
    "write": "write",
    "command": "write",
    "ingest": "ingest",
}


@pytest.mark.parametrize("scope", ["read", "write", "ingest"])
@pytest.mark.parametrize("kind", list(KIND_SCOPE))
def test_scope_matrix_json_api(alice, scope, kind):
    memory = remember(alice, "Prefers tabs over spaces")
    _token, client = token_client(alice, scopes=[scope])
    before = (Memory.objects.count(), Memory.objects.get(pk=memory.pk).content)

    response = call(client, kind, memory)

    if KIND_SCOPE[kind] == scope:
        assert response.status_code in (200, 201), response.content
    else:
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "FORBIDDEN"
        assert response.json()["error"]["details"] == {"scope": KIND_SCOPE[kind]}
        # Nothing changes on refusal.
        assert (Memory.objects.count(), Memory.objects.get(pk=memory.pk).content) == before
        assert not alice.conversations.exists()


def test_existing_and_default_tokens_have_full_scope(alice):
    token, _secret = ApiToken.issue(user=alice, name="old")
    assert token.scopes == ["read", "write", "ingest"] and token.limit == ""
    assert token.full_scope


def test_paused_token_is_refused_and_changes_nothing(alice):
    memory = remember(alice, "Prefers tabs over spaces")
    token, client = token_client(alice)
    token.pause()
    for kind in KIND_SCOPE:
        response = call(client, kind, memory)
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "TOKEN_PAUSED"
    assert Memory.objects.get(pk=memory.pk).content == "Prefers tabs over spaces"
    assert Memory.objects.count() == 1
    token.refresh_from_db()
    assert token.last_used_at is None

    token.resume()
    assert call(client, "read", memory).status_code == 200


def test_expired_token_is_unauthorized(alice):
    token, client = token_client(alice, expires_at=timezone.now() - timedelta(seconds=1))
    response = client.get("/api/v1/memories")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"
    token.expires_at = timezone.now() + timedelta(days=1)
    token.save()
    assert client.get("/api/v1/memories").status_code == 200


def test_personal_limit_sees_and_writes_personal_only(alice, project):
    mine = remember(alice, "Prefers tabs over spaces")
    shared = remember(alice, "The API uses tabs", scope=Scope.PROJECT, project=project)
    _token, client = token_client(alice, limit="personal")

    ids = {item["id"] for item in client.get("/api/v1/memories").json()["items"]}
    assert ids == {mine.pk}
    assert client.get(f"/api/v1/memories/{shared.pk}").status_code == 404
    found = client.get("/api/v1/memories/search", {"q": "tabs"}).json()["results"]
    assert {hit["memory"]["id"] for hit in found} == {mine.pk}
    refused = client.post(
        "/api/v1/memories",
        {"content": "Deploys on Fridays", "scope": "project", "project": project.pk},
        content_type="application/json",
    )
    assert refused.status_code == 403
    assert not Memory.objects.filter(content="Deploys on Fridays").exists()


def test_project_limit_sees_and_writes_that_project_only(alice, project):
    mine = remember(alice, "Prefers tabs over spaces")
    shared = remember(alice, "The API uses tabs", scope=Scope.PROJECT, project=project)
    _token, client = token_client(alice, limit="project", limit_project=project)

    ids = {item["id"] for item in client.get("/api/v1/memories").json()["items"]}
    assert ids == {shared.pk}
    assert client.get(f"/api/v1/memories/{mine.pk}").status_code == 404
    preview = client.post(
        "/api/v1/injection-preview", {"message": "tabs?"}, content_type="application/json"
    ).json()
    assert [m["id"] for m in preview["memories"]] == [shared.pk]
    personal = client.post(
        "/api/v1/memories", {"content": "Likes tea"}, content_type="application/json"
    )
    assert personal.status_code == 403
    added = client.post(
        "/api/v1/memories",
        {"content": "Deploys on Fridays", "scope": "project", "project": project.pk},
        content_type="application/json",
    )
    assert added.status_code == 201
    assert (
        client.post(
            "/api/v1/commands", {"command": "/memories"}, content_type="application/json"
        ).status_code
        == 403
    )


def test_project_limit_of_a_deleted_project_sees_nothing(alice, project):
    remember(alice, "Prefers tabs over spaces")
    remember(alice, "The API uses tabs", scope=Scope.PROJECT, project=project)
    token, client = token_client(alice, limit="project", limit_project=project)
    project.delete()
    token.refresh_from_db()
    assert token.limit == "project" and token.limit_project_id is None
    assert client.get("/api/v1/memories").json()["items"] == []


# The tokens page ----------------------------------------------------------------------


def test_tokens_page_creates_a_scoped_token_and_pauses_it(alice, project):
    client = client_for(alice)
    page = client.get("/settings/tokens/").content.decode()
    assert "Personal memories only" in page and project.name in page
    response = client.post(
        "/settings/tokens/new",
        {
            "name": "Work laptop",
            "scopes_shown": "1",
            "scopes": ["read"],
            "limit": f"project:{project.pk}",
            "expiry": "30",
        },
    )
    assert response.status_code == 302
    token = ApiToken.objects.get(name="Work laptop")
    assert token.scopes == ["read"]
    assert (token.limit, token.limit_project) == ("project", project)
    assert token.expires_at is not None and token.expires_at > timezone.now() + timedelta(days=29)

    page = client.get("/settings/tokens/").content.decode()
    assert "Read (recall, search, list)" in page and "Active" in page
    assert client.post(f"/settings/tokens/{token.pk}/pause").status_code == 302
    token.refresh_from_db()
    assert token.is_paused
    assert "Paused" in client.get("/settings/tokens/").content.decode()
    client.post(f"/settings/tokens/{token.pk}/resume")
    token.refresh_from_db()
    assert not token.is_paused


def test_tokens_page_needs_a_scope_when_the_form_shows_them(alice):
    response = client_for(alice).post(
        "/settings/tokens/new", {"name": "Nothing", "scopes_shown": "1", "expiry": "never"}
    )
    assert response.status_code == 400
    assert not ApiToken.objects.filter(name="Nothing").exists()


def test_token_pause_is_the_owners_only(alice, charlie):
    token, _client = token_client(alice)
    assert client_for(charlie).post(f"/settings/tokens/{token.pk}/pause").status_code == 404
    anonymous = Client().post(f"/settings/tokens/{token.pk}/pause")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    token.refresh_from_db()
    assert not token.is_paused


def test_project_limit_keeps_out_of_personal_conversations(alice, project):
    """Ingesting with a project-limited token: its conversations are the project's, and the
    user's personal conversations are out of its reach (issue 42, item 1)."""
    from conversations.models import Conversation, ExtractionRun

    personal = Conversation.objects.create(owner=alice, external_id="diary", title="My diary")
    run = ExtractionRun.objects.create(conversation=personal)
    _token, client = token_client(alice, limit="project", limit_project=project)

    started = client.post(
        "/api/v1/conversations", {"external_id": "chat-1"}, content_type="application/json"
    )
    assert started.status_code == 201 and started.json()["project"] == project.slug
    assert not Conversation.objects.filter(external_id="chat-1", project=None).exists()
    again = client.post(
        "/api/v1/conversations", {"external_id": "diary"}, content_type="application/json"
    )
    assert again.status_code == 403 and "My diary" not in again.content.decode()
    assert client.get(f"/api/v1/conversations/{personal.pk}").status_code == 404
    message = {"external_id": "m1", "role": "user", "content": "I moved to Lyon"}
    appended = client.post(
        f"/api/v1/conversations/{personal.pk}/messages",
        {"messages": [message]},
        content_type="application/json",
    )
    assert appended.status_code == 404 and not personal.messages.exists()
    for action in ("end", "extract"):
        ended = client.post(
            f"/api/v1/conversations/{personal.pk}/{action}", content_type="application/json"
        )
        assert ended.status_code == 404
    assert client.get(f"/api/v1/extraction-runs/{run.pk}").status_code == 404


def test_personal_limit_keeps_out_of_project_conversations(alice, project):
    from conversations.models import Conversation

    shared = Conversation.objects.create(owner=alice, external_id="team-chat", project=project)
    _token, client = token_client(alice, limit="personal")

    refused = client.post(
        "/api/v1/conversations",
        {"external_id": "chat-2", "project": project.slug},
        content_type="application/json",
    )
    assert refused.status_code == 403
    assert client.get(f"/api/v1/conversations/{shared.pk}").status_code == 404
    started = client.post(
        "/api/v1/conversations", {"external_id": "chat-3"}, content_type="application/json"
    )
    assert started.status_code == 201 and started.json()["project"] is None


def test_project_limit_of_a_deleted_project_starts_no_conversation(alice, project):
    _token, client = token_client(alice, limit="project", limit_project=project)
    project.delete()
    refused = client.post(
        "/api/v1/conversations", {"external_id": "chat-4"}, content_type="application/json"
    )
    assert refused.status_code == 403


@pytest.mark.django_db
def test_the_token_list_says_permissions_and_an_unambiguous_expiry(alice: Any) -> None:
    """Not a column headed "May", nor 12/05/2026 (issue 44 item 19)."""
    expires = timezone.make_aware(
        timezone.datetime(2026, 12, 5, 12), timezone.get_fixed_timezone(0)
    )
    ApiToken.issue(user=alice, name="Cursor", expires_at=expires)
    page = client_for(alice).get("/settings/tokens/").content.decode()
    assert ">Permissions<" in page and ">May<" not in page
    assert "Dec. 5, 2026" in page and "12/05/2026" not in page
    zh = client_for(alice).get("/settings/tokens/", headers={"Accept-Language": "zh-hans"})
    assert "2026年12月5日" in zh.content.decode()
