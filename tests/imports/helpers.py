"""Hand-made exports (tests/imports/data) and ways to import them in tests."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from imports import services
from imports.models import Import

DATA = Path(__file__).resolve().parent / "data"
CHATGPT_JSON = DATA / "chatgpt_conversations.json"
CLAUDE_JSON = DATA / "claude_conversations.json"


def upload(path: Path, name: str | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name or path.name, path.read_bytes())


def zipped(entries: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def chatgpt_zip() -> SimpleUploadedFile:
    """The export as ChatGPT sends it: conversations.json beside the chat page and images."""
    data = zipped(
        {
            "conversations.json": CHATGPT_JSON.read_bytes(),
            "chat.html": b"<html></html>",
            "user.json": b'{"id": "user-1"}',
            "file-Sketch01-dashboard-sketch.png": b"\x89PNG...",
        }
    )
    return SimpleUploadedFile("chatgpt-export.zip", data)


def imported(user: Any, source: str, file: SimpleUploadedFile, **choices: Any) -> Import:
    """Upload, read, and (when the file is fine) import with ``choices``; jobs run inline."""
    job = services.create_import(owner=user, source=source, upload=file)
    job.refresh_from_db()
    if job.status == "ready":
        services.start_import(
            job,
            keep_conversations=choices.get("keep_conversations", True),
            build_memories=choices.get("build_memories", True),
        )
        job.refresh_from_db()
    return job
