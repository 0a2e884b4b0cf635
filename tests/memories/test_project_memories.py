"""/projects/<slug>/memories, its actions and its activity feed: every role, and what each one sees."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from memories.models import Memory, MemoryEvent, Scope
from memories.services import memory_create, memory_update
from teams.models import Membership, Project, Role, Team
from tests.conftest import client_for
from tests.extraction_helpers import api_client, post_json

pytestmark = pytest.mark.django_db

SETTINGS = "/settings/memories"


def page_of(project: Project) -> str:
    return reverse("project-memories", args=[project.slug])


def shared(project: Project, owner: Any, content: str, **fields: Any) -> Memory:
    return memory_create(
        owner=owner, content=content, scope=Scope.PROJECT, project=project, actor=owner, **fields
    )


def htmx_from(url: str, target: str = "") -> dict[str, str]:
    headers = {"HX-Request": "true", "HX-Current-URL": f"http://testserver{url}"}
    if target:
        headers["HX-Target"] = target
    return headers


ROLES = ("owner", "admin", "member", "viewer", "stranger")
READ = (200, 200, 200, 200, 404)
WRITE = (302, 302, 302, 403, 404)


def project_actions(project: Project, memory: Memory) -> list[tuple[str, str, str, dict, tuple]]:
    """(name, method, url, data, expected status per role) for everything a project page does."""
    page = page_of(project)
    on = f"{SETTINGS}/{memory.pk}"
    alive = Memory.objects.of_project(project).filter(deleted_at__isnull=True).count()
    return [
        ("list", "get", page, {}, READ),
        ("list filtered", "get", page, {"q": "survey", "kind": "fact", "state": "trash"}, READ),
        ("activity", "get", reverse("project-activity", args=[project.slug]), {}, READ),
        ("project page", "get", reverse("project-detail", args=[project.slug]), {}, READ),
        ("history", "get", f"{on}/history", {}, READ),
        ("evidence", "get", f"{on}/evidence", {}, READ),
        ("edit form", "get", f"{on}/edit", {}, (200, 200, 200, 403, 404)),
        ("clear form", "get", f"{SETTINGS}/clear", {"next": page}, (200, 200, 200, 403, 404)),
        (
            "add",
            "post",
            f"{SETTINGS}/add",
            {"content": "Added here", "kind": "fact", "where": str(project.pk), "next": page},
            WRITE,
        ),
        (
            "edit",
            "post",
            f"{on}/edit",
            {"content": "Edited", "kind": "fact", "importance": "50", "revision": "1"},
            WRITE,
        ),
        ("pin", "post", f"{on}/pin", {"pinned": "1", "next": page}, WRITE),
        ("delete", "post", f"{on}/delete", {"next": page}, WRITE),
        ("restore", "post", f"{on}/restore", {"next": page}, WRITE),
        (
            "bulk",
            "post",
            f"{SETTINGS}/bulk",
            {"ids": [memory.pk], "action": "kind:goal", "next": page},
            WRITE,
        ),
        ("clear", "post", f"{SETTINGS}/clear", {"count": str(alive), "next": page}, WRITE),
    ]


@pytest.mark.parametrize("role_index", range(5), ids=ROLES)
def test_every_role_against_every_project_memories_page_and_action(
    role_index: int, people: dict[str, Any], project: Project
) -> None:
    role = ROLES[role_index]
    client = client_for(people[role])
    action_count = len(project_actions(project, shared(project, people["owner"], "First")))
    for index in range(action_count):
        # Each action on a fresh memory, so that one action's effect does not hide another's.
        memory = shared(project, people["owner"], f"The survey uses WGS84 ({index})")
        name, method, url, data, expected = project_actions(project, memory)[index]
        if name == "restore":
            Memory.objects.filter(pk=memory.pk).update(deleted_at=timezone.now())
        events_before = MemoryEvent.objects.count()
        response = getattr(client, method)(url, data)
        assert response.status_code == expected[role_index], f"{name} as {role}"
        if expected[role_index] in (403, 404):
            assert MemoryEvent.objects.count() == events_before, f"{name} as {role} wrote"
        elif method == "post":
            assert MemoryEvent.objects.count() > events_before, f"{name} as {role} did nothing"


def test_anonymous_is_sent_to_log_in(client: Any, project: Project) -> None:
    for url in (page_of(project), reverse("project-activity", args=[project.slug])):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


def test_a_member_sees_only_this_projects_memories_with_write_controls(
    alice: Any, bob: Any, charlie: Any, project: Project
) -> None:
    other_team = Team.objects.create(name="Other")
    Membership.objects.create(team=other_team, user=charlie, role=Role.OWNER)
    other = Project.objects.create(team=other_team, name="Elsewhere")
    shared(project, alice, "The survey uses WGS84")
    memory_create(owner=bob, content="Bob's private note", actor=bob)
    shared(other, charlie, "Charlie's project secret")
    page = client_for(bob).get(page_of(project)).content.decode()
    assert "Memories of Track Survey" in page
    assert "The survey uses WGS84" in page
    assert "private note" not in page and "secret" not in page
    assert "1 memory" in page
    for control in ("Add a memory", "Clear all", 'id="memory-bulk"', "/delete", "/edit"):
        assert control in page, control
    # The add form adds to this project only, and brings the user back here.
    assert f'name="where" value="{project.pk}"' in page
    assert "Me (personal)" not in page
    assert f'name="next" value="{page_of(project)}"' in page
    # Personal things of the settings page stay there.
    assert "Memory settings" not in page


def test_a_viewer_reads_without_write_controls(alice: Any, vera: Any, project: Project) -> None:
    memory = shared(project, alice, "The survey uses WGS84", evidence=[])
    page = client_for(vera).get(page_of(project)).content.decode()
    assert "The survey uses WGS84" in page
    assert "As a viewer you can read these memories" in page
    for control in ("Add a memory", "Clear all", 'id="memory-bulk"', "Import…"):
        assert control not in page, control
    for action in ("delete", "edit", "pin"):
        assert f"{SETTINGS}/{memory.pk}/{action}" not in page
    assert f"{SETTINGS}/{memory.pk}/history" in page
    assert reverse("project-files-export", args=[project.slug]) in page


def test_search_filters_and_states_of_a_project(alice: Any, bob: Any, project: Project) -> None:
    shared(project, alice, "The survey uses WGS84", kind="fact")
    shared(project, alice, "Deadline is in May", kind="goal")
    binned = shared(project, alice, "Old datum was Beijing 1954")
    Memory.objects.filter(pk=binned.pk).update(deleted_at=timezone.now())
    client = client_for(bob)
    page = client.get(page_of(project), {"q": "surv"}).content.decode()
    assert "<mark>survey</mark>" in page and "Deadline" not in page
    page = client.get(page_of(project), {"kind": "goal"}).content.decode()
    assert "Deadline is in May" in page and "WGS84" not in page
    page = client.get(page_of(project), {"state": "trash"}).content.decode()
    assert "Old datum" in page and "WGS84" not in page
    assert "Restore" in page
    # HTMX asks for the results alone and the address bar gets the project page's URL.
    response = client.get(
        page_of(project), {"q": "deadl"}, headers=htmx_from(page_of(project), "memory-results")
    )
    assert response["HX-Push-Url"] == f"{page_of(project)}?q=deadl"
    assert "<mark>Deadline</mark> is in May" in response.content.decode()


def test_add_from_the_project_page_adds_to_the_project(bob: Any, project: Project) -> None:
    client = client_for(bob)
    response = client.post(
        f"{SETTINGS}/add",
        {
            "content": "Use EPSG:4490",
            "kind": "decision",
            "where": str(project.pk),
            "next": page_of(project),
        },
    )
    assert response.status_code == 302 and response["Location"] == page_of(project)
    memory = Memory.objects.get(content="Use EPSG:4490")
    assert (memory.scope, memory.project, memory.owner) == (Scope.PROJECT, project, bob)
    # With HTMX the answer is a fresh form that still adds to the project.
    response = client.post(
        f"{SETTINGS}/add",
        {"content": "Survey on Mondays", "kind": "fact", "where": str(project.pk)},
        headers=htmx_from(page_of(project)),
    )
    assert response.status_code == 200
    assert f'name="where" value="{project.pk}"' in response.content.decode()
    assert Memory.objects.of_project(project).count() == 2


def test_add_refuses_empty_content_on_the_project_page(bob: Any, project: Project) -> None:
    response = client_for(bob).post(
        f"{SETTINGS}/add",
        {"content": " ", "kind": "fact", "where": str(project.pk), "next": page_of(project)},
    )
    assert response.status_code == 400
    assert "Write what should be remembered." in response.content.decode()
    assert "Memories of Track Survey" in response.content.decode()
    assert not Memory.objects.exists()


def test_clear_all_clears_this_projects_memories_and_undo_brings_them_back(
    alice: Any, bob: Any, project: Project
) -> None:
    kept = memory_create(owner=bob, content="Bob's own", actor=bob)
    other = Project.objects.create(team=project.team, name="Bridges")
    elsewhere = shared(other, alice, "Bridge fact")
    cleared = [shared(project, alice, f"Survey fact {n}") for n in range(3)]
    client = client_for(bob)
    panel = client.get(f"{SETTINGS}/clear", {"next": page_of(project)}).content.decode()
    assert "This moves 3 memories of Track Survey to the trash, for every member." in panel
    response = client.post(f"{SETTINGS}/clear", {"count": "3", "next": page_of(project)})
    assert response.status_code == 302 and response["Location"] == page_of(project)
    assert Memory.objects.of_project(project).in_trash().count() == 3
    assert Memory.objects.in_trash().count() == 3  # Bob's own and the other project's stay.
    page = client.get(page_of(project)).content.decode()
    assert "3 memories moved to the trash." in page and "Undo" in page
    batch = MemoryEvent.objects.get(memory=cleared[0], action="deleted").batch
    client.post(f"{SETTINGS}/undo", {"batch": str(batch), "next": page_of(project)})
    assert Memory.objects.of_project(project).alive().count() == 3
    assert not Memory.objects.filter(pk__in=[kept.pk, elsewhere.pk], deleted_at__isnull=False)


def test_bulk_all_matching_stays_within_the_project(alice: Any, bob: Any, project: Project) -> None:
    mine = memory_create(owner=bob, content="Survey notes of my own", actor=bob)
    in_project = shared(project, alice, "Survey uses WGS84")
    response = client_for(bob).post(
        f"{SETTINGS}/bulk",
        {"all_matching": "1", "action": "delete", "next": f"{page_of(project)}?q=survey"},
    )
    assert response.status_code == 302
    assert Memory.objects.get(pk=in_project.pk).deleted_at is not None
    assert Memory.objects.get(pk=mine.pk).deleted_at is None


def test_htmx_actions_from_the_project_page(
    alice: Any, bob: Any, vera: Any, project: Project
) -> None:
    memory = shared(project, alice, "The survey uses WGS84")
    response = client_for(bob).post(
        f"{SETTINGS}/{memory.pk}/pin", {"pinned": "1"}, headers=htmx_from(page_of(project))
    )
    assert response.status_code == 200
    assert f'id="memory-{memory.pk}"' in response.content.decode()
    assert "memories-changed" in response["HX-Trigger"]
    refused = client_for(vera).post(
        f"{SETTINGS}/add",
        {"content": "Sneaky", "kind": "fact", "where": str(project.pk)},
        headers=htmx_from(page_of(project)),
    )
    assert refused.status_code == 403
    assert not Memory.objects.filter(content="Sneaky").exists()


def test_an_archived_project_is_read_only_for_everyone(
    alice: Any, bob: Any, project: Project
) -> None:
    memory = shared(project, alice, "The survey uses WGS84")
    project.set_archived(True)
    client = client_for(bob)
    page = client.get(page_of(project)).content.decode()
    assert "This project is archived" in page
    assert "Add a memory" not in page and f"{SETTINGS}/{memory.pk}/delete" not in page
    assert (
        client.post(f"{SETTINGS}/{memory.pk}/delete", {"next": page_of(project)}).status_code == 403
    )
    assert (
        client_for(alice)
        .post(f"{SETTINGS}/clear", {"count": "1", "next": page_of(project)})
        .status_code
        == 403
    )
    assert Memory.objects.get(pk=memory.pk).deleted_at is None


# The activity feed ---------------------------------------------------------------


def test_activity_shows_who_changed_what_with_links_and_changes(
    alice: Any, bob: Any, project: Project
) -> None:
    memory = shared(project, alice, "The survey uses WGS84")
    memory_update(
        memory=memory,
        changes={"content": "The survey uses CGCS2000"},
        expected_revision=None,
        actor=bob,
    )
    memory_create(owner=bob, content="Not in the project", actor=bob)
    job = shared(project, alice, "Extracted fact")
    Memory.objects.filter(pk=job.pk).update(deleted_at=timezone.now())
    MemoryEvent.objects.filter(memory=job).update(actor=None, actor_label="extraction")
    page = client_for(bob).get(reverse("project-activity", args=[project.slug])).content.decode()
    assert "Activity of Track Survey" in page
    assert "Not in the project" not in page
    assert page.index("bob") < page.index("alice")  # Newest first.
    assert "edited" in page and "created" in page and "extraction" in page
    assert f'href="{page_of(project)}?memory={memory.pk}"' in page
    assert f'href="{page_of(project)}?state=trash&amp;memory={job.pk}"' in page
    assert "Before and after" in page
    assert "The survey uses WGS84" in page  # The "before" of bob's edit.


def test_activity_link_shows_that_one_memory(alice: Any, bob: Any, project: Project) -> None:
    memory = shared(project, alice, "The survey uses WGS84")
    shared(project, alice, "Deadline is in May")
    page = client_for(bob).get(page_of(project), {"memory": memory.pk}).content.decode()
    assert "WGS84" in page and "Deadline" not in page
    assert "Showing one memory." in page and "Show all memories" in page


def test_activity_is_paginated_and_escaped(alice: Any, bob: Any, project: Project) -> None:
    for n in range(31):
        shared(project, alice, f"<b>Fact</b> number {n}")
    client = client_for(bob)
    first = client.get(reverse("project-activity", args=[project.slug])).content.decode()
    assert "Fact</b> number 30" not in first and "&lt;b&gt;Fact&lt;/b&gt; number 30" in first
    assert "number 0<" not in first and "Page 1 of 2" in first and "?page=2" in first
    second = client.get(
        reverse("project-activity", args=[project.slug]), {"page": 2}
    ).content.decode()
    assert "&lt;b&gt;Fact&lt;/b&gt; number 0" in second and "?page=1" in second


def test_project_page_links_memories_activity_and_files_with_recent_activity(
    alice: Any, bob: Any, team: Team, project: Project
) -> None:
    shared(project, alice, "The survey uses WGS84")
    page = client_for(bob).get(reverse("project-detail", args=[project.slug])).content.decode()
    assert f'href="{page_of(project)}"' in page and "1 shared memory" in page
    assert reverse("project-activity", args=[project.slug]) in page
    assert reverse("project-files", args=[project.slug]) in page
    assert "The survey uses WGS84" in page
    team_page = client_for(bob).get(reverse("team-detail", args=[team.slug])).content.decode()
    assert f'href="{page_of(project)}"' in team_page


def test_both_memory_pages_link_export_and_import(bob: Any, project: Project) -> None:
    page = client_for(bob).get(page_of(project)).content.decode()
    assert reverse("project-files-export", args=[project.slug]) in page
    assert reverse("project-files", args=[project.slug]) + "#import-heading" in page
    page = client_for(bob).get(SETTINGS).content.decode()
    assert reverse("memory-files-export") in page
    assert reverse("memory-files") + "#import-heading" in page


# The settings page's view of project memories --------------------------------------------


def test_settings_scope_filter_lists_personal_and_each_project_of_the_user(
    alice: Any, bob: Any, charlie: Any, project: Project
) -> None:
    other_team = Team.objects.create(name="Other")
    Membership.objects.create(team=other_team, user=charlie, role=Role.OWNER)
    Project.objects.create(team=other_team, name="Not Bobs")
    bridges = Project.objects.create(team=project.team, name="Bridges")
    shared(project, alice, "The survey uses WGS84")
    shared(bridges, alice, "Bridge inspections in June")
    memory_create(owner=bob, content="Bob likes tea", actor=bob)
    client = client_for(bob)
    page = client.get(SETTINGS).content.decode()
    assert '<option value="personal">Personal</option>' in page
    assert f'<option value="project:{project.slug}">Track Survey</option>' in page
    assert f'<option value="project:{bridges.slug}">Bridges</option>' in page
    assert "Not Bobs" not in page
    assert f'<a href="{page_of(project)}">Track Survey</a>' in page
    page = client.get(SETTINGS, {"scope": f"project:{bridges.slug}"}).content.decode()
    assert "Bridge inspections" in page and "WGS84" not in page and "likes tea" not in page
    page = client.get(SETTINGS, {"scope": "personal"}).content.decode()
    assert "likes tea" in page and "Bridge inspections" not in page


def test_settings_writes_on_project_memories_follow_the_role(
    alice: Any, bob: Any, vera: Any, project: Project
) -> None:
    memory = shared(project, alice, "The survey uses WGS84")
    assert (
        client_for(vera).post(f"{SETTINGS}/{memory.pk}/delete", {"next": SETTINGS}).status_code
        == 403
    )
    response = client_for(vera).post(
        f"{SETTINGS}/bulk",
        {
            "ids": [memory.pk],
            "action": "delete",
            "next": f"{SETTINGS}?scope=project:{project.slug}",
        },
    )
    assert response.status_code == 403
    assert (
        client_for(bob).post(f"{SETTINGS}/{memory.pk}/delete", {"next": SETTINGS}).status_code
        == 302
    )
    assert Memory.objects.get(pk=memory.pk).deleted_at is not None


# API tokens act with their user's memberships, as they are now ----------------------------


def test_an_api_token_follows_its_users_memberships(bob: Any, vera: Any, project: Project) -> None:
    url = "/api/v1/conversations"
    bobs, veras = api_client(bob), api_client(vera)
    assert post_json(bobs, url, {"external_id": "a", "project": project.slug}).status_code == 201
    assert post_json(veras, url, {"external_id": "b", "project": project.slug}).status_code == 403
    Membership.objects.filter(user=vera).update(role=Role.MEMBER)
    assert post_json(veras, url, {"external_id": "b", "project": project.slug}).status_code == 201
    Membership.objects.filter(user=bob).delete()
    refused = post_json(bobs, url, {"external_id": "c", "project": project.pk})
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "NOT_FOUND"
    project.set_archived(True)
    archived = post_json(veras, url, {"external_id": "d", "project": project.slug})
    assert archived.status_code == 403 and archived.json()["error"]["code"] == "FORBIDDEN"


def test_project_pages_in_chinese(alice: Any, vera: Any, project: Project) -> None:
    shared(project, alice, "The survey uses WGS84")
    chinese = {"Accept-Language": "zh-CN,zh;q=0.9"}
    client = client_for(vera)
    page = client.get(page_of(project), headers=chinese).content.decode()
    assert "Track Survey 的记忆" in page
    assert "作为查看者，你可以阅读这些记忆，但不能修改。" in page
    activity = reverse("project-activity", args=[project.slug])
    page = client.get(activity, headers=chinese).content.decode()
    assert "Track Survey 的动态" in page and "修改前后" in page
