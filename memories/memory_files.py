"""Memories as Markdown files people can read, edit and keep in git.

Export writes one file per kind (``facts.md``, ``lessons.md``…), pinned
memories under ``_core/``. Each file opens with a small front matter block
(``key: value`` lines between ``---``) and holds one bullet per memory::

    - Deploys go out on Tuesdays. <!-- id:42 tags:ops,release importance:0.85 -->

The trailing comment is invisible when the Markdown is rendered, survives hand
edits, and lets an import recognise the memory a bullet came from. Import also
reads Markdown written by hand: ``## `` headings group bullets (a heading that
names a kind sets it, any other becomes a tag), ``_core/`` bullets are pinned
and ``topics/NAME.md`` tags its bullets NAME.

Import is two steps: ``plan_import`` compares the files with what is stored
and says what would be added, updated or skipped, writing nothing;
``services.memories_import`` applies a plan as one undoable batch.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from django.utils.translation import gettext as _

from accounts.text import CONTROL_CHARACTERS, CONTROL_CHARACTERS_MESSAGE
from memories.models import KIND_ALIASES, Kind, Memory, MemoryQuerySet, Scope
from memories.sensitive import only_secret, redact
from memories.services import clean_tags

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.core.files.uploadedfile import UploadedFile

    from teams.models import Project

KIND_FILES: dict[str, str] = {
    Kind.PREFERENCE: "preferences.md",
    Kind.FACT: "facts.md",
    Kind.LESSON: "lessons.md",
    Kind.DECISION: "decisions.md",
    Kind.PATTERN: "patterns.md",
    Kind.GOAL: "goals.md",
    Kind.CONTEXT: "context.md",
}
KIND_TITLES: dict[str, str] = {
    Kind.PREFERENCE: "Preferences",
    Kind.FACT: "Facts",
    Kind.LESSON: "Lessons",
    Kind.DECISION: "Decisions",
    Kind.PATTERN: "Patterns",
    Kind.GOAL: "Goals",
    Kind.CONTEXT: "Context",
}
CORE_DIR = "_core"
TOPICS_DIR = "topics"

# Bounds on what one import reads, so an upload cannot exhaust memory. The files ride
# along in the confirmation form, which must stay under DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB).
MAX_IMPORT_BYTES = 2 * 1024 * 1024
MAX_IMPORT_FILES = 500

_META_KEYS = ("id", "tags", "importance")
# The last comment on the line: the memory's own text may hold "<!--" or "-->".
_META_COMMENT = re.compile(r"\s*<!--(?P<body>(?:(?!<!--|-->).)*)-->\s*$")
# Lines end at LF, CR LF or CR only: str.splitlines also splits at characters such as
# U+2028 or form feed, which a memory's text may hold.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Characters a tag cannot hold as they are in the metadata comment: the list separator,
# "<" and ">" (which could end the comment), "%", whitespace but a plain space, and a
# space before "word:" (which would start another field).
_TAG_ESCAPED = re.compile(r"[%,<>]|[^\S ]| (?=[A-Za-z_]+:)")
_META_SPLIT = re.compile(r"\s+(?=[A-Za-z_]+:)")
_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+(?P<text>.*)$")
_HEADING = re.compile(r"^(?P<level>#{1,6})\s+(?P<text>.*?)\s*#*\s*$")


def kind_named(name: str) -> str | None:
    """The kind a file name or heading names (``facts``, ``Lessons``, ``knowledge``…), if any."""
    word = name.strip().lower()
    for kind, file_name in KIND_FILES.items():
        if word in (kind, file_name.removesuffix(".md")):
            return kind
    return KIND_ALIASES.get(word) or KIND_ALIASES.get(word.removesuffix("s"))


# Export ---------------------------------------------------------------------


def _format_number(value: float) -> str:
    return format(round(value, 3), "g")


def _escape_tag(tag: str) -> str:
    return _TAG_ESCAPED.sub(lambda match: quote(match[0], safe=""), tag)


def _unescape_tag(tag: str) -> str:
    return unquote(tag)


def _lines(text: str) -> list[str]:
    return _LINE_BREAK.split(text)


def format_memory(memory: Memory) -> str:
    """One memory as a bullet: continuation lines indented, metadata in a trailing comment."""
    lines = _lines(memory.content.strip())
    meta = [f"id:{memory.pk}"]
    if memory.tags:
        meta.append("tags:" + ",".join(_escape_tag(tag) for tag in memory.tags))
    meta.append(f"importance:{_format_number(memory.importance)}")
    body = [f"- {lines[0]}", *(f"  {line}" if line.strip() else "" for line in lines[1:])]
    body[-1] += f" <!-- {' '.join(meta)} -->"
    return "\n".join(body)


def export_tree(
    memories: Iterable[Memory], *, scope: str, project: Project | None, exported_at: datetime
) -> dict[str, str]:
    """Path → Markdown text for each kind that has memories (pinned ones under ``_core/``)."""
    groups: dict[tuple[bool, str], list[Memory]] = {}
    for memory in memories:
        groups.setdefault((memory.pinned, memory.kind), []).append(memory)
    tree: dict[str, str] = {}
    for pinned in (False, True):
        for kind, file_name in KIND_FILES.items():
            group = groups.get((pinned, kind))
            if not group:
                continue
            title = KIND_TITLES[kind] + (" (pinned)" if pinned else "")
            front_matter = [
                "---",
                f"scope: {scope}",
                f"project: {project.slug if project else ''}".rstrip(),
                f"kind: {kind}",
                f"exported_at: {exported_at.isoformat(timespec='seconds')}",
                "---",
            ]
            bullets = [format_memory(memory) for memory in group]
            text = "\n".join([*front_matter, "", f"# {title}", "", *bullets, ""])
            tree[f"{CORE_DIR}/{file_name}" if pinned else file_name] = text
    return tree


def tree_to_zip(tree: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(tree):
            archive.writestr(path, tree[path])
    return buffer.getvalue()


def write_directory(tree: dict[str, str], directory: Path) -> None:
    """Write the tree into ``directory``, removing kind files a previous export left that
    are now empty, so the folder mirrors the memories (and a git diff shows the change)."""
    for sub in ("", CORE_DIR):
        for file_name in KIND_FILES.values():
            stale = directory / sub / file_name
            if str(PurePosixPath(sub, file_name)) not in tree and stale.exists():
                stale.unlink()
    for path, text in tree.items():
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


# Reading files ----------------------------------------------------------------


@dataclass(frozen=True)
class FileProblem:
    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}, line {self.line}" if self.line else self.path
        return f"{where}: {self.message}"


def _ignored(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return any(part.startswith(".") or part == "__MACOSX" for part in parts)


def _decode(path: str, data: bytes, problems: list[FileProblem]) -> str | None:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        problems.append(FileProblem(path, None, _("not UTF-8 text.")))
        return None
    if found := CONTROL_CHARACTERS.search(text):
        line = text.count("\n", 0, found.start()) + 1
        problems.append(FileProblem(path, line, str(CONTROL_CHARACTERS_MESSAGE)))
        return None
    return text


def read_uploads(uploads: Iterable[UploadedFile]) -> tuple[dict[str, str], list[FileProblem]]:
    """Path → text from uploaded ``.md`` files and zips of them; problems for the rest."""
    files: dict[str, str] = {}
    problems: list[FileProblem] = []
    total = 0

    def add(path: str, data: bytes) -> None:
        nonlocal total
        total += len(data)
        if path in files:
            problems.append(FileProblem(path, None, _("two files have this name.")))
        elif total > MAX_IMPORT_BYTES or len(files) >= MAX_IMPORT_FILES:
            problems.append(FileProblem(path, None, _("too much to import at once.")))
        elif (text := _decode(path, data, problems)) is not None:
            files[path] = text

    for upload in uploads:
        name = PurePosixPath((upload.name or "upload").replace("\\", "/")).name
        if (upload.size or 0) > MAX_IMPORT_BYTES:
            problems.append(FileProblem(name, None, _("too much to import at once.")))
        elif name.lower().endswith(".zip"):
            _read_zip(name, upload.read(MAX_IMPORT_BYTES + 1), add, problems)
        elif name.lower().endswith(".md"):
            add(name, upload.read(MAX_IMPORT_BYTES + 1))
        else:
            problems.append(FileProblem(name, None, _("not a Markdown (.md) or zip file.")))
    return files, problems


def _read_zip(
    name: str, data: bytes, add: Callable[[str, bytes], None], problems: list[FileProblem]
) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        problems.append(FileProblem(name, None, _("not a readable zip file.")))
        return
    with archive:
        entries = [
            info
            for info in archive.infolist()
            if not info.is_dir()
            and not _ignored(info.filename)
            and info.filename.lower().endswith(".md")
        ]
        # The sizes the zip declares, checked before anything is inflated; reading stops
        # at the declared size, so an entry cannot inflate to more than it claims.
        if sum(info.file_size for info in entries) > MAX_IMPORT_BYTES:
            message = _("too much to import at once (over %(mb)s MB uncompressed).")
            problems.append(FileProblem(name, None, message % {"mb": MAX_IMPORT_BYTES >> 20}))
            return
        for info in entries:
            if info.file_size > MAX_IMPORT_BYTES:
                problems.append(FileProblem(info.filename, None, _("too much to import at once.")))
                continue
            with archive.open(info) as entry:
                add(info.filename, entry.read(MAX_IMPORT_BYTES + 1))


def read_directory(directory: Path) -> tuple[dict[str, str], list[FileProblem]]:
    """Path → text of every ``.md`` file under ``directory`` (hidden folders such as .git skipped)."""
    files: dict[str, str] = {}
    problems: list[FileProblem] = []
    for file_path in sorted(directory.rglob("*.md")):
        relative = file_path.relative_to(directory).as_posix()
        if not _ignored(relative):
            text = _decode(relative, file_path.read_bytes(), problems)
            if text is not None:
                files[relative] = text
    return files, problems


# Parsing --------------------------------------------------------------------


@dataclass(frozen=True)
class FileItem:
    """One memory as read from a file."""

    path: str
    line: int
    content: str
    kind: str
    tags: tuple[str, ...]
    pinned: bool
    importance: float | None = None
    memory_id: int | None = None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class ParsedFiles:
    items: list[FileItem] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class _FileContext:
    path: str
    kind: str
    pinned: bool
    topic: str | None
    section_kind: str | None = None
    section_tag: str | None = None


def parse_files(files: dict[str, str]) -> ParsedFiles:
    parsed = ParsedFiles()
    for path in sorted(files):
        items = _parse_file(path, files[path], parsed.problems)
        if not items and not any(p.path == path for p in parsed.problems):
            parsed.notes.append(
                _("%(path)s: no bullets found, nothing to import.") % {"path": path}
            )
        parsed.items.extend(items)
    seen_ids: dict[int, FileItem] = {}
    for item in parsed.items:
        if item.memory_id is None:
            continue
        if item.memory_id in seen_ids:
            first = seen_ids[item.memory_id]
            parsed.problems.append(
                FileProblem(
                    item.path,
                    item.line,
                    _("id %(id)s is used twice (also at %(where)s).")
                    % {"id": item.memory_id, "where": first.where},
                )
            )
        seen_ids.setdefault(item.memory_id, item)
    return parsed


def _read_front_matter(
    path: str, lines: list[str], problems: list[FileProblem]
) -> tuple[dict[str, str], int]:
    """The ``key: value`` pairs of a front matter block, and the index of the first body line."""
    if not lines or lines[0].strip() != "---":
        return {}, 0
    values: dict[str, str] = {}
    for index in range(1, len(lines)):
        line = lines[index].strip()
        if line == "---":
            return values, index + 1
        if not line or line.startswith("#"):
            continue
        key, colon, value = line.partition(":")
        if not colon or not key.strip():
            problems.append(
                FileProblem(path, index + 1, _("front matter lines must read “key: value”."))
            )
            continue
        values[key.strip().lower()] = value.strip().strip("\"'")
    problems.append(FileProblem(path, 1, _("the front matter is not closed with “---”.")))
    return values, len(lines)


def _file_context(
    path: str, front_matter: dict[str, str], problems: list[FileProblem]
) -> _FileContext:
    posix = PurePosixPath(path)
    kind = kind_named(posix.stem) or Kind.FACT
    if "kind" in front_matter:
        named = kind_named(front_matter["kind"])
        if named is None:
            problems.append(
                FileProblem(
                    path, None, _("unknown kind “%(kind)s”.") % {"kind": front_matter["kind"]}
                )
            )
        else:
            kind = named
    topic = posix.stem if posix.parent.name == TOPICS_DIR else None
    return _FileContext(path=path, kind=kind, pinned=CORE_DIR in posix.parts, topic=topic)


def _parse_file(path: str, text: str, problems: list[FileProblem]) -> list[FileItem]:
    lines = _lines(text)
    front_matter, start = _read_front_matter(path, lines, problems)
    context = _file_context(path, front_matter, problems)
    items: list[FileItem] = []
    open_item: tuple[int, list[str]] | None = None
    pending_blanks = 0

    def close() -> None:
        nonlocal open_item
        if open_item is not None:
            item = _make_item(context, open_item[0], open_item[1], problems)
            if item is not None:
                items.append(item)
        open_item = None

    for index in range(start, len(lines)):
        line = lines[index].rstrip()
        number = index + 1
        if not line.strip():
            pending_blanks += 1
            continue
        if line[0] in " \t" and open_item is not None:
            open_item[1].extend([""] * pending_blanks)
            open_item[1].append(line[2:] if line.startswith("  ") else line.lstrip("\t "))
            pending_blanks = 0
            continue
        pending_blanks = 0
        close()
        if heading := _HEADING.match(line):
            if len(heading["level"]) >= 2:
                named = kind_named(heading["text"])
                context.section_kind = named
                context.section_tag = None if named else heading["text"]
            continue
        if bullet := _BULLET.match(line):
            open_item = (number, [bullet["text"]])
    close()
    return items


def _make_item(
    context: _FileContext, first_line: int, lines: list[str], problems: list[FileProblem]
) -> FileItem | None:
    last_line = first_line + len(lines) - 1
    meta: dict[str, Any] = {}
    comment = _META_COMMENT.search(lines[-1])
    if comment and _is_meta(comment["body"]):
        read_meta = _parse_meta(context.path, last_line, comment["body"], problems)
        if read_meta is None:
            return None
        meta = read_meta
        lines = [*lines[:-1], lines[-1][: comment.start()]]
    content = "\n".join(lines).strip()
    if not content:
        problems.append(FileProblem(context.path, first_line, _("empty memory.")))
        return None
    if only_secret(content):
        message = _("only a secret (a password, key or token); it is not imported.")
        problems.append(FileProblem(context.path, first_line, message))
        return None
    content = redact(content)[0]
    tags = clean_tags([*meta.get("tags", ()), context.topic or "", context.section_tag or ""])
    return FileItem(
        path=context.path,
        line=first_line,
        content=content,
        kind=context.section_kind or context.kind,
        tags=tuple(tags),
        pinned=context.pinned,
        importance=meta.get("importance"),
        memory_id=meta.get("id"),
    )


def _is_meta(body: str) -> bool:
    return any(part.partition(":")[0] in _META_KEYS for part in _META_SPLIT.split(body.strip()))


def _parse_meta(
    path: str, line: int, body: str, problems: list[FileProblem]
) -> dict[str, Any] | None:
    meta: dict[str, Any] = {}
    before = len(problems)
    for part in _META_SPLIT.split(body.strip()):
        key, _colon, value = part.partition(":")
        value = value.strip()
        if key == "id":
            if not value.isdigit():
                problems.append(
                    FileProblem(path, line, _("id must be a number, not “%(v)s”.") % {"v": value})
                )
            else:
                meta["id"] = int(value)
        elif key == "tags":
            meta["tags"] = [_unescape_tag(tag) for tag in value.split(",")]
        elif key == "importance":
            try:
                importance = float(value)
            except ValueError:
                importance = -1.0
            if not 0 <= importance <= 1:
                problems.append(
                    FileProblem(
                        path,
                        line,
                        _("importance must be between 0 and 1, not “%(v)s”.") % {"v": value},
                    )
                )
            else:
                meta["importance"] = importance
        else:
            problems.append(FileProblem(path, line, _("unknown field “%(key)s”.") % {"key": key}))
    return None if len(problems) > before else meta


# Planning -------------------------------------------------------------------


def _normalised(content: str) -> str:
    return " ".join(content.split()).casefold()


@dataclass(frozen=True)
class PlannedUpdate:
    item: FileItem
    memory: Memory
    changes: dict[str, Any]

    @property
    def differences(self) -> list[tuple[str, str, str]]:
        """(field, stored value, value in the file) for each change, as text to show."""
        return [
            (name, _shown(getattr(self.memory, name)), _shown(value))
            for name, value in self.changes.items()
        ]


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, list):
        return ", ".join(value) or "—"
    return str(value)


@dataclass(frozen=True)
class PlannedSkip:
    item: FileItem
    reason: str
    memory: Memory | None = None


@dataclass
class ImportPlan:
    to_add: list[FileItem] = field(default_factory=list)
    to_update: list[PlannedUpdate] = field(default_factory=list)
    skipped: list[PlannedSkip] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def can_apply(self) -> bool:
        return not self.problems and bool(self.to_add or self.to_update)

    def fingerprint(self) -> str:
        """Changes when what confirming would write changes (files or stored memories)."""
        state = [
            [[i.content, i.kind, i.tags, i.pinned, i.importance] for i in self.to_add],
            [[u.memory.pk, u.memory.revision, sorted(u.changes.items())] for u in self.to_update],
        ]
        return hashlib.sha256(json.dumps(state, default=str).encode()).hexdigest()


def _changes(item: FileItem, memory: Memory) -> dict[str, Any]:
    wanted = {
        "content": item.content,
        "kind": item.kind,
        "tags": list(item.tags),
        "pinned": item.pinned,
    }
    changes = {name: value for name, value in wanted.items() if getattr(memory, name) != value}
    # A file without an importance keeps the stored one; numbers compare as written (3 places).
    if item.importance is not None and round(item.importance, 3) != round(memory.importance, 3):
        changes["importance"] = item.importance
    return changes


def plan_import(parsed: ParsedFiles, memories: MemoryQuerySet) -> ImportPlan:
    """What importing ``parsed`` into ``memories`` (one user's or one project's) would do."""
    plan = ImportPlan(problems=list(parsed.problems), notes=list(parsed.notes))
    ids = {item.memory_id for item in parsed.items if item.memory_id is not None}
    by_id = {memory.pk: memory for memory in memories.filter(pk__in=ids)}
    seen: dict[str, str] = {
        _normalised(content): _("memory #%(id)s") % {"id": pk}
        for pk, content in memories.alive().values_list("pk", "content")
    }
    for item in parsed.items:
        memory = by_id.get(item.memory_id) if item.memory_id is not None else None
        if memory is not None:
            plan_for_known = _plan_known(item, memory)
            if isinstance(plan_for_known, PlannedUpdate):
                plan.to_update.append(plan_for_known)
            else:
                plan.skipped.append(plan_for_known)
            seen.setdefault(_normalised(item.content), item.where)
            continue
        key = _normalised(item.content)
        if key in seen:
            reason = _("duplicate of %(other)s") % {"other": seen[key]}
            plan.skipped.append(PlannedSkip(item, reason))
            continue
        seen[key] = item.where
        plan.to_add.append(item)
    return plan


def _plan_known(item: FileItem, memory: Memory) -> PlannedUpdate | PlannedSkip:
    if memory.deleted_at is not None:
        return PlannedSkip(item, _("in the trash; restore it first to change it"), memory)
    if memory.forgotten_at is not None:
        return PlannedSkip(item, _("forgotten; restore it first to change it"), memory)
    changes = _changes(item, memory)
    if not changes:
        return PlannedSkip(item, _("unchanged"), memory)
    return PlannedUpdate(item, memory, changes)


# Whose memories ---------------------------------------------------------------


@dataclass(frozen=True)
class MemoryFilesTarget:
    """Personal memories of ``user``, or the memories of ``project`` as ``user`` sees them."""

    user: User
    project: Project | None = None

    @property
    def scope(self) -> str:
        return Scope.PROJECT if self.project else Scope.USER

    def memories(self) -> MemoryQuerySet:
        if self.project is not None:
            return Memory.objects.of_project(self.project)
        return Memory.objects.personal_of(self.user)

    def exportable(self) -> MemoryQuerySet:
        """What an export holds: the memories in effect now, oldest first."""
        return self.memories().in_effect().order_by("created_at", "id")

    def export(self, exported_at: datetime) -> dict[str, str]:
        return export_tree(
            self.exportable(), scope=self.scope, project=self.project, exported_at=exported_at
        )

    def file_name(self, exported_at: datetime) -> str:
        name = self.project.slug if self.project else "personal"
        return f"memories-{name}-{exported_at:%Y%m%d-%H%M%S}.zip"

    def plan(self, files: dict[str, str], read_problems: Iterable[FileProblem] = ()) -> ImportPlan:
        """The import plan for ``files``; ``read_problems`` (unreadable uploads) come first."""
        plan = plan_import(parse_files(files), self.memories())
        plan.problems[:0] = read_problems
        return plan
