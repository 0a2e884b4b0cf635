"""/api/v1/imports: a ChatGPT or Claude export, or saved memories, imported as on /settings/data.

``POST /imports`` takes the file as ``multipart/form-data`` (up to IMPORT_MAX_BYTES, not
API_MAX_BODY_BYTES) and answers 202 at once: the job worker reads the file, then (unless
``start`` is false) imports it with the choices sent. ``GET /imports/{id}`` reports the
status, the preview, the progress and the result; a file that cannot be imported ends
``invalid`` with its ``error`` (a stable code: see docs/API.md). The token needs the
``ingest`` scope, and ``write`` too for saved memories; an import is personal, so a token
limited to one project may not make one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.conf import settings
from django.http import HttpRequest
from ninja import Field, File, Form, Router, Schema, Status
from ninja.files import UploadedFile

from accounts.models import MemorySettings, TokenLimit, TokenScope
from api.auth import ApiRequest, requires_scope, scope_refusal
from api.errors import ApiError
from api.schemas import InSchema, StrictBool
from imports import errors, services
from imports.errors import ImportNotAllowed, ImportRefused
from imports.models import Import, Source

router = Router(tags=["imports"])

# Imports GET /imports lists, newest first.
LISTED = 20


class PartOut(Schema):
    done: int
    total: int


class ImportErrorOut(Schema):
    code: str = Field(description="A stable code: " + ", ".join(errors.CODES) + ".")
    message: str
    details: dict[str, Any]


class ImportResultOut(Schema):
    conversations_stored: int
    conversations_skipped: int = Field(description="There already (imported before).")
    messages_stored: int
    messages_extracted: int
    memories_created: int
    memories_known: int = Field(description="Known already: confirmed again, or not added.")
    memories_superseded: int = Field(description="Older memories the new ones replaced.")
    memories_refused: int = Field(description="Saved memories that are only a secret.")
    conversations_undone: int
    memories_undone: int


class ImportOut(Schema):
    id: int
    source: str
    status: str = Field(
        description="analysing, ready (waiting for POST /start), invalid, importing, done, "
        "failed, undoing or undone."
    )
    phase: str = Field(description="While importing: store, extract or embed.")
    file_name: str
    file_size: int
    keep_conversations: bool
    build_memories: bool
    preview: dict[str, Any] = Field(description="What the file holds (once read).")
    progress: dict[str, PartOut] = Field(
        description="read (bytes), stored, extracted or indexed (messages), added (memories)."
    )
    result: ImportResultOut
    error: ImportErrorOut | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    undone_at: datetime | None


class ChoicesIn(InSchema):
    keep_conversations: StrictBool = Field(True, description="Keep as past conversations.")
    build_memories: StrictBool = Field(True, description="Build memories from them.")


def import_out(job: Import) -> dict[str, Any]:
    error = None
    if job.error_code:
        message = errors.message(job.source, job.error_code, job.error_details)
        error = {"code": job.error_code, "message": message, "details": job.error_details}
    return {
        **{name: getattr(job, name) for name in ImportOut.model_fields if hasattr(job, name)},
        "progress": {
            part: {"done": done, "total": total} for part, (done, total) in job.progress().items()
        },
        "result": {name: getattr(job, name) for name in ImportResultOut.model_fields},
        "error": error,
    }


def _refused(refused: ImportNotAllowed) -> ApiError:
    code = {
        errors.BUSY: "CONFLICT",
        errors.NOT_READY: "CONFLICT",
        errors.NOT_UNDOABLE: "CONFLICT",
        errors.NOT_DISCARDABLE: "CONFLICT",
        errors.NOT_RESUMABLE: "CONFLICT",
        errors.MEMORY_OFF: "MEMORY_DISABLED",
        errors.MEMORY_PAUSED: "MEMORY_DISABLED",
    }.get(refused.code, "VALIDATION_ERROR")
    return ApiError(code, errors.refusal(refused.code), {"reason": refused.code})


def _own(request: HttpRequest, import_id: int) -> Import:
    job = Import.objects.of(request.user).filter(pk=import_id).first()
    if job is None:
        raise ApiError("NOT_FOUND", f"No import {import_id} of yours.")
    return job


@router.post("/imports", response={202: ImportOut}, summary="Import an export or saved memories")
@requires_scope(TokenScope.INGEST)
def import_create(
    request: ApiRequest,
    source: Form[Literal["chatgpt", "claude", "memories"]],
    file: File[UploadedFile] = None,  # type: ignore[assignment]
    text: Form[str] = "",
    keep_conversations: Form[bool] = True,
    build_memories: Form[bool] = True,
    start: Form[bool] = True,
) -> Status[dict[str, Any]]:
    token = getattr(request, "api_token", None)
    if token is not None and token.limit == TokenLimit.PROJECT:
        raise ApiError("FORBIDDEN", "Imports are personal; this token is limited to a project.")
    if source == Source.MEMORIES:
        if refusal := scope_refusal(token, TokenScope.WRITE):
            raise refusal
        if not MemorySettings.for_user(request.user).memory_enabled:
            raise ApiError(
                "MEMORY_DISABLED",
                "Memory is off for this account; turn it on at /settings/memories.",
            )
    if file is None and not (source == Source.MEMORIES and text.strip()):
        what = "the file or the text" if source == Source.MEMORIES else "the file"
        raise ApiError(
            "VALIDATION_ERROR",
            f"Send {what} as multipart/form-data.",
            {"fields": [{"field": "file", "message": f"expected {errors.expected(source)}"}]},
        )
    try:
        job = services.create_import(
            owner=request.user,
            source=source,
            upload=file,
            text=text,
            keep_conversations=keep_conversations,
            build_memories=build_memories,
            start_when_ready=start,
        )
    except ImportRefused as refused:
        raise ApiError(
            "PAYLOAD_TOO_LARGE",
            errors.message(source, refused.code, refused.details),
            {"limit": settings.IMPORT_MAX_BYTES},
        ) from None
    except ImportNotAllowed as refused:
        raise _refused(refused) from None
    job.refresh_from_db()
    return Status(202, import_out(job))


@router.get("/imports", response=list[ImportOut], summary="Your latest imports")
@requires_scope(TokenScope.INGEST)
def import_list(request: HttpRequest) -> list[dict[str, Any]]:
    return [import_out(job) for job in Import.objects.of(request.user)[:LISTED]]


@router.get("/imports/{import_id}", response=ImportOut, summary="An import's progress and result")
@requires_scope(TokenScope.INGEST)
def import_detail(request: HttpRequest, import_id: int) -> dict[str, Any]:
    return import_out(_own(request, import_id))


def _act(request: HttpRequest, import_id: int, action: Any) -> Status[dict[str, Any]]:
    job = _own(request, import_id)
    try:
        action(job)
    except ImportNotAllowed as refused:
        raise _refused(refused) from None
    job.refresh_from_db()
    return Status(202, import_out(job))


@router.post(
    "/imports/{import_id}/start",
    response={202: ImportOut},
    summary="Import what the preview showed, as chosen",
)
@requires_scope(TokenScope.INGEST)
def import_start(
    request: HttpRequest, import_id: int, payload: ChoicesIn
) -> Status[dict[str, Any]]:
    return _act(
        request,
        import_id,
        lambda job: services.start_import(
            job,
            keep_conversations=payload.keep_conversations,
            build_memories=payload.build_memories,
        ),
    )


@router.post(
    "/imports/{import_id}/undo",
    response={202: ImportOut},
    summary="Undo an import: its conversations and every memory made from them",
)
@requires_scope(TokenScope.INGEST)
def import_undo(request: HttpRequest, import_id: int) -> Status[dict[str, Any]]:
    return _act(request, import_id, services.undo_import)


@router.post(
    "/imports/{import_id}/resume",
    response={202: ImportOut},
    summary="Try again an import stopped by errors",
)
@requires_scope(TokenScope.INGEST)
def import_resume(request: HttpRequest, import_id: int) -> Status[dict[str, Any]]:
    return _act(request, import_id, services.resume_import)


@router.delete(
    "/imports/{import_id}",
    response={204: None},
    summary="Forget an import that wrote nothing (a preview, a refused file) or was undone",
)
@requires_scope(TokenScope.INGEST)
def import_discard(request: HttpRequest, import_id: int) -> Status[None]:
    job = _own(request, import_id)
    try:
        services.discard_import(job)
    except ImportNotAllowed as refused:
        raise _refused(refused) from None
    return Status(204, None)
