"""Markdown memory files: the export format, parsing our files and hand-written ones, planning,
applying as one undoable batch, the round trip and the management commands."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from memories import services
from memories.memory_files import (
    MemoryFilesTarget,
    export_tree,
    parse_files,
    read_directory,
    write_directory,
)
from memories.models import EventAction, Kind, Memory, MemoryEvent, Origin, Scope, Status
from teams.models import Project

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots" / "memory_files" / "personal"
EXPORTED_AT = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def known_set(owner: Any) -> dict[str, Memory]:
    """A fixed set of personal memories, by label, and some that an export must leave out."""
    create = services.memory_create
    memories = {
        "british": create(
            owner=owner,
            content="Prefers answers in British English.",
            kind=Kind.PREFERENCE,
            tags=["style"],
        ),
        "lyon": create(owner=owner, content="Lives in Lyon.", kind=Kind.FACT),
        "build": create(
            owner=owner,
            content="The build needs:\n- Python 3.11\n\n- PostgreSQL 16",
            kind=Kind.FACT,
            tags=["build", "ci"],
            importance=0.65,
        ),
        "force": create(
            owner=owner,
            content="Never force-push to main.",
            kind=Kind.LESSON,
            tags=["git"],
            pinned=True,
        ),
        "pgvector": create(
            owner=owner,
            content="Use pgvector, not a separate vector database.",
            kind=Kind.DECISION,
            tags=["ops, infra", "db"],
        ),
        "chinese": create(
            owner=owner,
            content="学习中文，每天十个词。",
            kind=Kind.GOAL,
            tags=["语言"],
        ),
    }
    trashed = create(owner=owner, content="An old context note.", kind=Kind.CONTEXT)
    services.memory_delete(memory=trashed, actor=owner)
    create(owner=owner, content="Awaiting review.", status=Status.PENDING)
    return memories


def labelled(tree: dict[str, str], memories: dict[str, Memory]) -> dict[str, str]:
    """The tree with database ids replaced by the memories' labels, so it compares across runs."""
    labels = {str(memory.pk): label for label, memory in memories.items()}
    return {
        path: re.sub(r"id:(\d+)", lambda m: f"id:{labels[m[1]]}", text)
        for path, text in tree.items()
    }


def test_export_matches_the_snapshot(alice: Any, bob: Any) -> None:
    memories = known_set(alice)
    services.memory_create(owner=bob, content="Bob's own memory.")
    tree = labelled(MemoryFilesTarget(user=alice).export(EXPORTED_AT), memories)
    if os.environ.get("UPDATE_SNAPSHOTS"):
        write_directory(tree, SNAPSHOTS)
    assert read_directory(SNAPSHOTS) == (tree, [])


def test_export_of_a_project_names_it_and_holds_only_its_memories(
    alice: Any, project: Project
) -> None:
    services.memory_create(
        owner=alice, content="Track gauge is 1435 mm.", scope=Scope.PROJECT, project=project
    )
    services.memory_create(owner=alice, content="Personal, not the project's.")
    tree = MemoryFilesTarget(user=alice, project=project).export(EXPORTED_AT)
    assert list(tree) == ["facts.md"]
    assert "scope: project\nproject: track-survey\n" in tree["facts.md"]
    assert "Track gauge is 1435 mm." in tree["facts.md"]
    assert "Personal" not in tree["facts.md"]


def test_our_format_parses_back_to_the_same_memories(alice: Any) -> None:
    memories = known_set(alice)
    parsed = parse_files(MemoryFilesTarget(user=alice).export(EXPORTED_AT))
    assert parsed.problems == []
    read = {item.memory_id: item for item in parsed.items}
    assert set(read) == {memory.pk for memory in memories.values()}
    for memory in memories.values():
        item = read[memory.pk]
        assert (item.content, item.kind, list(item.tags), item.pinned, item.importance) == (
            memory.content,
            memory.kind,
            memory.tags,
            memory.pinned,
            memory.importance,
        )


def test_hand_written_markdown() -> None:
    files = {
        "notes.md": (
            "# My notes\n\nSome text that is not a memory.\n\n"
            "## Lessons\n- Run the tests before pushing.\n* Small commits\n  read better.\n\n"
            "## Deployment\n1. Deploys go out on Tuesdays.\n"
        ),
        "_core/me.md": "- My name is Alice.\n",
        "topics/rust.md": "## Preferences\n- Prefer `cargo clippy` clean code.\n",
        "preferences.md": "- Dark mode everywhere.\n",
    }
    items = {item.content: item for item in parse_files(files).items}
    assert set(items) == {
        "Run the tests before pushing.",
        "Small commits\nread better.",
        "Deploys go out on Tuesdays.",
        "My name is Alice.",
        "Prefer `cargo clippy` clean code.",
        "Dark mode everywhere.",
    }
    assert items["Run the tests before pushing."].kind == Kind.LESSON
    assert items["Small commits\nread better."].kind == Kind.LESSON
    assert (
        items["Deploys go out on Tuesdays."].kind,
        items["Deploys go out on Tuesdays."].tags,
    ) == (
        Kind.FACT,
        ("deployment",),
    )
    assert items["My name is Alice."].pinned is True
    assert items["Prefer `cargo clippy` clean code."].tags == ("rust",)
    assert items["Prefer `cargo clippy` clean code."].kind == Kind.PREFERENCE
    assert items["Dark mode everywhere."].kind == Kind.PREFERENCE
    assert items["Run the tests before pushing."].line == 6


def test_malformed_files_are_reported_line_by_line() -> None:
    files = {
        "facts.md": (
            "---\nscope: user\nthis line is wrong\n---\n"
            "- Fine.\n"
            "- Bad importance. <!-- id:3 importance:high -->\n"
            "- Bad id. <!-- id:x7 -->\n"
            "- <!-- id:9 tags:a -->\n"
            "- Twice. <!-- id:12 -->\n"
            "- Twice again. <!-- id:12 -->\n"
            "- Odd field. <!-- id:13 colour:blue -->\n"
        ),
        "lessons.md": "---\nkind: wisdom\n---\n- Something.\n",
        "goals.md": "---\nscope: user\n- never closed\n",
    }
    problems = [str(problem) for problem in parse_files(files).problems]
    assert problems == [
        "facts.md, line 3: front matter lines must read “key: value”.",
        "facts.md, line 6: importance must be between 0 and 1, not “high”.",
        "facts.md, line 7: id must be a number, not “x7”.",
        "facts.md, line 8: empty memory.",
        "facts.md, line 11: unknown field “colour”.",
        "goals.md, line 3: front matter lines must read “key: value”.",
        "goals.md, line 1: the front matter is not closed with “---”.",
        "lessons.md: unknown kind “wisdom”.",
        "facts.md, line 10: id 12 is used twice (also at facts.md:9).",
    ]


def plan_for(user: Any, files: dict[str, str]) -> Any:
    return MemoryFilesTarget(user=user).plan(files)


def test_preview_lists_additions_updates_and_duplicates(alice: Any) -> None:
    memories = known_set(alice)
    tree = MemoryFilesTarget(user=alice).export(EXPORTED_AT)
    tree["facts.md"] = tree["facts.md"].replace("Lives in Lyon.", "Lives in Grenoble.")
    tree["topics/new.md"] = (
        "- Lives in grenoble.\n- Likes trains.\n- prefers answers in  british english.\n"
    )
    plan = plan_for(alice, tree)
    assert [item.content for item in plan.to_add] == ["Likes trains."]
    assert [(u.memory, u.changes) for u in plan.to_update] == [
        (memories["lyon"], {"content": "Lives in Grenoble."})
    ]
    reasons = {skip.item.content: skip.reason for skip in plan.skipped}
    assert reasons["Lives in grenoble."] == "duplicate of facts.md:10"
    assert (
        reasons["prefers answers in  british english."]
        == f"duplicate of memory #{memories['british'].pk}"
    )
    assert reasons["Never force-push to main."] == "unchanged"
    assert len(reasons) == 7
    assert Memory.objects.filter(owner=alice).count() == 8, "a preview writes nothing"


def test_ids_of_someone_elses_memories_do_not_match(alice: Any, bob: Any) -> None:
    bobs = services.memory_create(owner=bob, content="Bob's secret.")
    plan = plan_for(alice, {"facts.md": f"- Mine now. <!-- id:{bobs.pk} -->\n"})
    assert [item.content for item in plan.to_add] == ["Mine now."]
    assert plan.to_update == []


def test_import_applies_one_batch_that_one_undo_reverses(alice: Any) -> None:
    memories = known_set(alice)
    tree = MemoryFilesTarget(user=alice).export(EXPORTED_AT)
    tree["facts.md"] = tree["facts.md"].replace("importance:0.8", "importance:0.5")
    tree["_core/lessons.md"] = tree["_core/lessons.md"].replace("tags:git", "tags:git,safety")
    tree["goals.md"] += "- Run a marathon.\n"
    plan = plan_for(alice, tree)
    batch = services.memories_import(plan=plan, owner=alice, project=None, actor=alice)

    events = MemoryEvent.objects.filter(batch=batch)
    assert sorted(events.values_list("action", flat=True)) == ["created", "edited", "edited"]
    added = Memory.objects.get(content="Run a marathon.")
    assert (added.origin, added.kind, added.importance) == (Origin.IMPORTED, Kind.GOAL, 0.7)
    memories["lyon"].refresh_from_db()
    assert memories["lyon"].importance == 0.5
    assert memories["lyon"].revision == 2

    services.memory_undo_batch(batch=batch, actor=alice)
    memories["lyon"].refresh_from_db()
    memories["force"].refresh_from_db()
    added.refresh_from_db()
    assert memories["lyon"].importance == 0.8
    assert memories["force"].tags == ["git"]
    assert added.deleted_at is not None
    assert Memory.objects.filter(owner=alice).alive().count() == 7


def test_round_trip_changes_exactly_the_edited_memory(alice: Any, tmp_path: Path) -> None:
    memories = known_set(alice)
    call_command("export_memories", user="alice@example.com", dir=str(tmp_path))
    facts = tmp_path / "facts.md"
    facts.write_text(facts.read_text().replace("Lives in Lyon.", "Lives in Lyon, near the Saône."))
    before = {m.pk: m.snapshot() for m in Memory.objects.all()}
    events_before = MemoryEvent.objects.count()

    call_command("import_memories", user="alice@example.com", dir=str(tmp_path))

    after = {m.pk: m.snapshot() for m in Memory.objects.all()}
    changed = {pk for pk in before if before[pk] != after[pk]}
    assert changed == {memories["lyon"].pk}
    assert set(after) == set(before), "nothing added"
    assert after[memories["lyon"].pk]["content"] == "Lives in Lyon, near the Saône."
    assert after[memories["lyon"].pk]["revision"] == 2
    new_events = MemoryEvent.objects.order_by("id")[events_before:]
    assert [(e.memory_id, e.action) for e in new_events] == [
        (memories["lyon"].pk, EventAction.EDITED)
    ]


def test_export_into_a_folder_removes_files_of_kinds_now_empty(alice: Any, tmp_path: Path) -> None:
    memories = known_set(alice)
    call_command("export_memories", user="alice@example.com", dir=str(tmp_path))
    assert (tmp_path / "_core" / "lessons.md").exists()
    services.memory_set_pinned(memory=memories["force"], pinned=False, actor=alice)
    call_command("export_memories", user="alice@example.com", dir=str(tmp_path))
    assert not (tmp_path / "_core" / "lessons.md").exists()
    assert "Never force-push to main." in (tmp_path / "lessons.md").read_text()


def test_import_command_of_malformed_files_writes_nothing(
    alice: Any, tmp_path: Path, capsys: Any
) -> None:
    (tmp_path / "facts.md").write_text("- Good one.\n- Bad. <!-- importance:2 -->\n")
    (tmp_path / "latin.md").write_bytes("- caf\xe9\n".encode("latin-1"))
    with pytest.raises(CommandError, match="Nothing was imported"):
        call_command("import_memories", user="alice@example.com", dir=str(tmp_path))
    errors = capsys.readouterr().err
    assert "facts.md, line 2: importance must be between 0 and 1" in errors
    assert "latin.md: not UTF-8 text." in errors
    assert not Memory.objects.exists()


def test_import_command_into_a_project(
    alice: Any, bob: Any, project: Project, tmp_path: Path
) -> None:
    (tmp_path / "decisions.md").write_text("- Survey with lidar.\n")
    call_command(
        "import_memories",
        project=project.slug,
        user="bob@example.com",
        dir=str(tmp_path),
        dry_run=True,
    )
    assert not Memory.objects.exists()
    call_command("import_memories", project=project.slug, user="bob@example.com", dir=str(tmp_path))
    memory = Memory.objects.get()
    assert (memory.scope, memory.project, memory.owner, memory.kind) == (
        Scope.PROJECT,
        project,
        bob,
        Kind.DECISION,
    )


def test_import_command_refuses_a_viewer_and_a_stranger(
    vera: Any, charlie: Any, project: Project, tmp_path: Path
) -> None:
    (tmp_path / "facts.md").write_text("- Anything.\n")
    with pytest.raises(CommandError, match="cannot change"):
        call_command("import_memories", project=project.slug, user=vera.email, dir=str(tmp_path))
    with pytest.raises(CommandError, match="not a member"):
        call_command("import_memories", project=project.slug, user=charlie.email, dir=str(tmp_path))
    assert not Memory.objects.exists()


def test_export_tree_is_empty_without_memories(alice: Any) -> None:
    assert export_tree([], scope="user", project=None, exported_at=timezone.now()) == {}
