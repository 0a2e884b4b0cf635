"""The Memory files pages, personal and per project: export, preview, confirm, undo, and who may."""

from __future__ import annotations

import html as html_lib
import io
import re
import zipfile
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from memories import services
from memories.memory_files import MemoryFilesTarget
from memories.models import Kind, Memory, MemoryEvent, Origin, Scope
from teams.models import Membership, Project, Role
from tests.conftest import client_for, make_user


def md(name: str, text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="text/markdown")


def hidden(html: str, name: str) -> str:
    match = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert match, f"no hidden {name}"
    return html_lib.unescape(match[1])


def preview_and_confirm(client: Any, base: str, upload: SimpleUploadedFile) -> Any:
    preview = client.post(f"{base}/preview", {"files": [upload]})
    assert preview.status_code == 200, preview.content.decode()
    html = preview.content.decode()
    return client.post(
        f"{base}/confirm",
        {"files": hidden(html, "files"), "fingerprint": hidden(html, "fingerprint")},
    )


def test_personal_export_downloads_a_zip_of_markdown(alice: Any) -> None:
    services.memory_create(owner=alice, content="Likes <b>bold</b> coffee.", kind=Kind.PREFERENCE)
    client = client_for(alice)
    page = client.get(reverse("memory-files")).content.decode()
    assert "1 memory in effect." in page
    response = client.get(reverse("memory-files-export"))
    assert response["Content-Type"] == "application/zip"
    assert re.match(
        r'attachment; filename="memories-personal-\d{8}-\d{6}\.zip"',
        response["Content-Disposition"],
    )
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert archive.namelist() == ["preferences.md"]
    assert "- Likes <b>bold</b> coffee. <!-- id:" in archive.read("preferences.md").decode()


def test_preview_shows_what_will_happen_and_writes_nothing(alice: Any) -> None:
    kept = services.memory_create(owner=alice, content="Lives in Lyon.")
    edited = services.memory_create(owner=alice, content="Works at Acme.")
    upload = md(
        "facts.md",
        f"- Lives in Lyon. <!-- id:{kept.pk} importance:0.8 -->\n"
        f"- Works at Acme <script>alert(1)</script>. <!-- id:{edited.pk} importance:0.8 -->\n"
        "- lives in   LYON.\n- Has two cats.\n",
    )
    response = client_for(alice).post(reverse("memory-files-preview"), {"files": [upload]})
    html = response.content.decode()
    assert "To add: 1" in html and "Has two cats." in html
    assert "To update: 1" in html and "&lt;script&gt;" in html and "<script>alert" not in html
    assert (
        "Skipped: 2" in html and "unchanged" in html and f"duplicate of memory #{kept.pk}" in html
    )
    assert "Confirm import" in html
    assert Memory.objects.count() == 2
    assert MemoryEvent.objects.count() == 2


def test_confirm_imports_one_batch_shows_the_result_and_undo_reverses_it(alice: Any) -> None:
    edited = services.memory_create(owner=alice, content="Works at Acme.")
    client = client_for(alice)
    upload = md("facts.md", f"- Works at Initech. <!-- id:{edited.pk} -->\n- Has two cats.\n")
    response = preview_and_confirm(client, "/settings/memories/files", upload)
    assert response.status_code == 302
    batch = response["Location"].split("imported=")[1]
    assert MemoryEvent.objects.filter(batch=batch).count() == 2
    cats = Memory.objects.get(content="Has two cats.")
    assert (cats.origin, cats.scope, cats.owner) == (Origin.IMPORTED, Scope.USER, alice)
    edited.refresh_from_db()
    assert edited.content == "Works at Initech."

    result = client.get(response["Location"]).content.decode()
    assert "1 memory added" in result and "1 updated." in result and "Undo this import" in result

    response = client.post(reverse("memory-files-undo"), {"batch": batch}, follow=True)
    assert "Import undone" in response.content.decode()
    edited.refresh_from_db()
    cats.refresh_from_db()
    assert edited.content == "Works at Acme."
    assert cats.deleted_at is not None


def test_a_zip_upload_with_pinned_and_topic_files(alice: Any) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes/_core/me.md", "- My name is Alice.\n")
        archive.writestr("notes/topics/trains.md", "- Likes the TGV.\n")
        archive.writestr("notes/image.png", b"\x89PNG")
        archive.writestr("__MACOSX/notes/._me.md", b"\x00\x01")
    upload = SimpleUploadedFile("notes.zip", buffer.getvalue(), content_type="application/zip")
    response = preview_and_confirm(client_for(alice), "/settings/memories/files", upload)
    assert response.status_code == 302
    assert Memory.objects.get(content="My name is Alice.").pinned is True
    assert Memory.objects.get(content="Likes the TGV.").tags == ["trains"]


def test_malformed_upload_is_reported_line_by_line_and_cannot_be_confirmed(alice: Any) -> None:
    client = client_for(alice)
    uploads = [
        md("facts.md", "- Fine.\n- Bad. <!-- importance:7 -->\n"),
        SimpleUploadedFile("notes.txt", b"hello"),
        SimpleUploadedFile("broken.zip", b"not a zip"),
        SimpleUploadedFile("latin.md", "- caf\xe9".encode("latin-1")),
    ]
    response = client.post(reverse("memory-files-preview"), {"files": uploads})
    html = response.content.decode()
    assert response.status_code == 400
    assert "facts.md, line 2: importance must be between 0 and 1, not “7”." in html
    assert "notes.txt: not a Markdown (.md) or zip file." in html
    assert "broken.zip: not a readable zip file." in html
    assert "latin.md: not UTF-8 text." in html
    assert "Confirm import" not in html

    # A forged confirmation of the same files is refused as well.
    response = client.post(
        reverse("memory-files-confirm"),
        {"files": '{"facts.md": "- Fine.\\n- Bad. <!-- importance:7 -->\\n"}', "fingerprint": "x"},
    )
    assert response.status_code == 400
    assert not Memory.objects.exists()


def test_confirm_after_the_memories_changed_shows_a_new_preview(alice: Any) -> None:
    memory = services.memory_create(owner=alice, content="Works at Acme.")
    client = client_for(alice)
    preview = client.post(
        reverse("memory-files-preview"),
        {"files": [md("facts.md", f"- Works at Initech. <!-- id:{memory.pk} -->\n")]},
    ).content.decode()
    services.memory_update(
        memory=memory, changes={"tags": ["job"]}, expected_revision=None, actor=alice
    )
    response = client.post(
        reverse("memory-files-confirm"),
        {"files": hidden(preview, "files"), "fingerprint": hidden(preview, "fingerprint")},
    )
    assert "Memories changed since the preview" in response.content.decode()
    memory.refresh_from_db()
    assert memory.content == "Works at Acme."


def test_preview_with_htmx_returns_the_preview_alone(alice: Any) -> None:
    response = client_for(alice).post(
        reverse("memory-files-preview"),
        {"files": [md("facts.md", "- x <!-- id:zz -->\n")]},
        headers={"HX-Request": "true"},
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<section class="preview-section"')
    assert "id must be a number" in html


def test_an_empty_upload_and_a_broken_confirmation_lose_nothing(alice: Any) -> None:
    client = client_for(alice)
    response = client.post(reverse("memory-files-preview"), {}, follow=True)
    assert "Choose a zip or one or more .md files" in response.content.decode()
    response = client.post(reverse("memory-files-confirm"), {"files": "{not json"}, follow=True)
    assert "upload the files again" in response.content.decode()


def test_nobody_can_undo_someone_elses_import(alice: Any, bob: Any) -> None:
    response = preview_and_confirm(
        client_for(alice), "/settings/memories/files", md("facts.md", "- Mine.\n")
    )
    batch = response["Location"].split("imported=")[1]
    assert client_for(bob).get(f"{reverse('memory-files')}?imported={batch}").status_code == 404
    assert client_for(bob).post(reverse("memory-files-undo"), {"batch": batch}).status_code == 404
    assert Memory.objects.get().deleted_at is None


# Project files: every role -------------------------------------------------------

ROLES = ("owner", "admin", "member", "viewer", "stranger")


@pytest.fixture
def people(alice: Any, bob: Any, vera: Any, charlie: Any, project: Project) -> dict[str, Any]:
    admin = make_user("adam@example.com")
    Membership.objects.create(team=project.team, user=admin, role=Role.ADMIN)
    return {"owner": alice, "admin": admin, "member": bob, "viewer": vera, "stranger": charlie}


@pytest.mark.parametrize(
    ("role", "read", "write"),
    [
        ("owner", 200, 302),
        ("admin", 200, 302),
        ("member", 200, 302),
        ("viewer", 200, 403),
        ("stranger", 404, 404),
    ],
)
def test_every_role_against_the_project_files_pages(
    role: str, read: int, write: int, people: dict[str, Any], project: Project
) -> None:
    services.memory_create(
        owner=people["owner"], content="Gauge is 1435 mm.", scope=Scope.PROJECT, project=project
    )
    base = f"/projects/{project.slug}/files"
    client = client_for(people[role])
    assert client.get(base).status_code == read
    assert client.get(f"{base}/export").status_code == read

    upload = md("decisions.md", "- Survey with lidar.\n")
    preview = client.post(f"{base}/preview", {"files": [upload]})
    assert preview.status_code == (200 if write == 302 else write)
    # Confirming and undoing take the same check, whatever the form holds.
    writer_preview = client_for(people["member"]).post(
        f"{base}/preview", {"files": [md("d.md", "- Survey with lidar.\n")]}
    )
    html = writer_preview.content.decode()
    confirm = client.post(
        f"{base}/confirm",
        {"files": hidden(html, "files"), "fingerprint": hidden(html, "fingerprint")},
    )
    assert confirm.status_code == write
    if write == 302:
        memory = Memory.objects.get(content="Survey with lidar.")
        assert (memory.scope, memory.project, memory.owner) == (
            Scope.PROJECT,
            project,
            people[role],
        )
        batch = confirm["Location"].split("imported=")[1]
    else:
        assert not Memory.objects.filter(content="Survey with lidar.").exists()
        batch = str(
            services.memories_import(
                plan=_plan_for(project, people["member"]),
                owner=people["member"],
                project=project,
                actor=people["member"],
            )
        )
    assert client.post(f"{base}/undo", {"batch": batch}).status_code == write


def _plan_for(project: Project, user: Any) -> Any:
    return MemoryFilesTarget(user=user, project=project).plan({"d.md": "- Survey with lidar.\n"})


def test_project_export_holds_the_projects_memories(alice: Any, bob: Any, project: Project) -> None:
    services.memory_create(
        owner=alice, content="Gauge is 1435 mm.", scope=Scope.PROJECT, project=project
    )
    services.memory_create(owner=bob, content="Bob's own note.")
    response = client_for(bob).get(reverse("project-files-export", args=[project.slug]))
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    text = archive.read("facts.md").decode()
    assert "Gauge is 1435 mm." in text and "project: track-survey" in text
    assert "Bob's own note." not in text


def test_a_viewer_sees_no_import_form_and_an_archived_project_takes_no_import(
    alice: Any, vera: Any, project: Project
) -> None:
    page = client_for(vera).get(reverse("project-files", args=[project.slug])).content.decode()
    assert "Preview import" not in page and "Viewers can export" in page
    project.set_archived(True)
    client = client_for(alice)
    assert (
        "is archived" in client.get(reverse("project-files", args=[project.slug])).content.decode()
    )
    response = client.post(
        reverse("project-files-preview", args=[project.slug]), {"files": [md("f.md", "- x\n")]}
    )
    assert response.status_code == 403


def test_an_import_is_undone_once_and_not_over_later_edits(alice: Any) -> None:
    client = client_for(alice)
    response = preview_and_confirm(
        client, "/settings/memories/files", md("goals.md", "- 学习中文。\n")
    )
    batch = response["Location"].split("imported=")[1]
    memory = Memory.objects.get()
    assert (memory.content, memory.kind) == ("学习中文。", Kind.GOAL)

    services.memory_update(
        memory=memory, changes={"tags": ["zh"]}, expected_revision=None, actor=alice
    )
    page = client.get(response["Location"]).content.decode()
    assert "Undo this import" not in page and "can no longer be undone" in page
    response = client.post(reverse("memory-files-undo"), {"batch": batch}, follow=True)
    assert "cannot be undone" in response.content.decode()
    memory.refresh_from_db()
    assert memory.deleted_at is None


def test_a_second_undo_is_refused(alice: Any) -> None:
    client = client_for(alice)
    response = preview_and_confirm(client, "/settings/memories/files", md("facts.md", "- Once.\n"))
    batch = response["Location"].split("imported=")[1]
    client.post(reverse("memory-files-undo"), {"batch": batch})
    events = MemoryEvent.objects.count()
    response = client.post(reverse("memory-files-undo"), {"batch": batch}, follow=True)
    assert "cannot be undone" in response.content.decode()
    assert MemoryEvent.objects.count() == events


def test_only_staff_are_shown_the_server_command(alice: Any) -> None:
    """End users cannot run manage.py (issue 44 item 17)."""
    assert "manage.py" not in client_for(alice).get("/settings/memories/files").content.decode()
    admin = make_user("ops@example.com", is_staff=True)
    assert "manage.py export_memories" in (
        client_for(admin).get("/settings/memories/files").content.decode()
    )
