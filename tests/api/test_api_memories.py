from __future__ import annotations

import pytest

from accounts.models import MemorySettings
from memories import services
from memories.models import Memory, MemoryEvent, Scope
from tests.conftest import client_for
from tests.recall_helpers import ApiClient, error_code, remember

pytestmark = pytest.mark.django_db


def test_create_get_and_history(alice, django_capture_on_commit_callbacks):
    api = ApiClient(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/memories", {"content": " Prefers dark mode ", "kind": "style", "tags": ["#UI"]}
        )

    assert response.status_code == 201
    body = response.json()
    assert body["content"] == "Prefers dark mode"
    assert body["kind"] == "preference" and body["tags"] == ["ui"]
    assert body["importance"] == 0.9 and body["revision"] == 1
    memory = Memory.objects.get(pk=body["id"])
    # The embedding job ran after the commit, not inside the request.
    assert memory.embedding is not None and memory.embedding_model.startswith("local-hash")
    assert api.get(f"/memories/{memory.pk}").json()["content"] == "Prefers dark mode"
    history = api.get(f"/memories/{memory.pk}/history").json()
    assert [event["action"] for event in history["events"]] == ["created"]
    assert history["events"][0]["actor"] == "alice"


def test_update_with_revision_and_conflict(alice):
    api = ApiClient(alice)
    memory = remember(alice, "Lives in Berlin")

    updated = api.patch(f"/memories/{memory.pk}", {"revision": 1, "content": "Lives in Paris"})
    assert updated.status_code == 200
    assert updated.json()["revision"] == 2

    stale = api.patch(f"/memories/{memory.pk}", {"revision": 1, "content": "Lives in Rome"})
    assert stale.status_code == 409
    error = stale.json()["error"]
    assert error["code"] == "CONFLICT"
    assert error["details"]["current"]["content"] == "Lives in Paris"
    assert error["details"]["current"]["revision"] == 2
    assert Memory.objects.get(pk=memory.pk).content == "Lives in Paris"


def test_delete_is_soft_and_restore_brings_it_back(alice):
    api = ApiClient(alice)
    memory = remember(alice, "Gym on Mondays")

    deleted = api.delete(f"/memories/{memory.pk}")
    assert deleted.status_code == 200 and deleted.json()["state"] == "trash"
    assert Memory.objects.filter(pk=memory.pk).exists()
    assert api.get("/memories").json()["items"] == []
    assert [m["id"] for m in api.get("/memories", {"state": "trash"}).json()["items"]] == [
        memory.pk
    ]

    restored = api.post(f"/memories/{memory.pk}/restore")
    assert restored.json()["state"] == "active"
    actions = list(MemoryEvent.objects.filter(memory=memory).values_list("action", flat=True))
    assert actions == ["restored", "deleted", "created"]


def test_list_filters_and_cursor_pagination(alice, project):
    api = ApiClient(alice)
    created = [remember(alice, f"Note {n}", kind="fact") for n in range(5)]
    remember(alice, "A preference", kind="preference")
    remember(alice, "Project fact", scope=Scope.PROJECT, project=project, tags=["survey"])

    seen = []
    cursor = None
    while True:
        params = {"kind": "fact", "scope": "user", "limit": 2}
        if cursor:
            params["cursor"] = cursor
        page = api.get("/memories", params).json()
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == [memory.pk for memory in reversed(created)]
    by_project = api.get("/memories", {"project": project.slug, "tag": "survey"}).json()
    assert [item["content"] for item in by_project["items"]] == ["Project fact"]


def test_search_returns_scores_and_parts(alice):
    api = ApiClient(alice)
    remember(alice, "Deploys go through GitHub Actions")
    remember(alice, "部署使用 GitHub Actions")

    body = api.get("/memories/search", {"q": "部署"}).json()

    # The Chinese word first; "deploy" is the same concept, found at a lower weight.
    assert [hit["memory"]["content"] for hit in body["results"]] == [
        "部署使用 GitHub Actions",
        "Deploys go through GitHub Actions",
    ]
    assert body["results"][0]["score_parts"]["keyword_rank"] == 1
    assert body["degraded"] is None


def test_stats_count_by_kind_scope_and_state(alice, project):
    api = ApiClient(alice)
    remember(alice, "Likes tea", kind="preference")
    remember(alice, "Project decision", kind="decision", scope=Scope.PROJECT, project=project)
    trashed = remember(alice, "Old fact")
    services.memory_delete(memory=trashed, actor=alice)
    remember(alice, "Awaiting review", status="pending")

    stats = api.get("/memories/stats").json()

    assert stats["by_state"] == {
        "active": 2,
        "pending": 1,
        "rejected": 0,
        "trash": 1,
        "forgotten": 0,
    }
    assert stats["total"] == 4
    assert stats["by_kind"]["preference"] == 1 and stats["by_kind"]["decision"] == 1
    assert stats["by_scope"] == {"user": 1, "project": 1, "conversation": 0}


def test_a_stranger_never_sees_anothers_memory(alice, charlie, project):
    personal = remember(alice, "Alice's secret plan")
    shared = remember(alice, "Project secret plan", scope=Scope.PROJECT, project=project)
    api = ApiClient(charlie)

    for memory in (personal, shared):
        assert error_code(api.get(f"/memories/{memory.pk}")) == "NOT_FOUND"
        assert error_code(api.get(f"/memories/{memory.pk}/history")) == "NOT_FOUND"
        assert error_code(api.patch(f"/memories/{memory.pk}", {"revision": 1})) == "NOT_FOUND"
        assert error_code(api.delete(f"/memories/{memory.pk}")) == "NOT_FOUND"
        assert error_code(api.post(f"/memories/{memory.pk}/restore")) == "NOT_FOUND"
    assert api.get("/memories").json()["items"] == []
    assert api.get("/memories", {"state": "all"}).json()["items"] == []
    assert api.get("/memories/search", {"q": "secret plan"}).json()["results"] == []
    assert api.get("/memories/stats").json()["total"] == 0
    assert error_code(api.get("/memories", {"project": project.slug})) == "NOT_FOUND"
    preview = api.post("/injection-preview", {"message": "secret plan"}).json()
    assert preview["memories"] == []
    assert error_code(api.post("/injection-preview", {"message": "x", "project": project.pk})) == (
        "NOT_FOUND"
    )
    assert Memory.objects.filter(deleted_at__isnull=True).count() == 2


def test_project_members_write_and_viewers_only_read(alice, bob, vera, project):
    shared = remember(alice, "Survey uses total stations", scope=Scope.PROJECT, project=project)

    member = ApiClient(bob)
    assert member.get(f"/memories/{shared.pk}").status_code == 200
    edited = member.patch(f"/memories/{shared.pk}", {"revision": 1, "pinned": True})
    assert edited.status_code == 200 and edited.json()["pinned"] is True
    created = member.post(
        "/memories", {"content": "Bob's project note", "scope": "project", "project": project.pk}
    )
    assert created.status_code == 201

    viewer = ApiClient(vera)
    assert viewer.get(f"/memories/{shared.pk}").status_code == 200
    assert error_code(viewer.patch(f"/memories/{shared.pk}", {"revision": 2})) == "FORBIDDEN"
    assert error_code(viewer.delete(f"/memories/{shared.pk}")) == "FORBIDDEN"
    refused = viewer.post(
        "/memories", {"content": "Vera's note", "scope": "project", "project": project.slug}
    )
    assert error_code(refused) == "FORBIDDEN"
    assert not Memory.objects.filter(content="Vera's note").exists()


def test_creating_with_memory_off_is_refused(alice):
    MemorySettings.objects.filter(user=alice).update(memory_enabled=False)

    response = ApiClient(alice).post("/memories", {"content": "Remember this"})

    assert response.status_code == 409
    assert error_code(response) == "MEMORY_DISABLED"
    assert not Memory.objects.exists()


def test_a_signed_in_browser_may_call_the_api(alice):
    remember(alice, "Browser visible note")

    response = client_for(alice).get("/api/v1/memories")

    assert response.status_code == 200
    assert response.json()["items"][0]["content"] == "Browser visible note"
