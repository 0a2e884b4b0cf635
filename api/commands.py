"""POST /api/v1/commands (a forwarded slash command) and POST /api/v1/commands/undo."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from django.core.exceptions import DisallowedHost
from ninja import Field, Router, Schema

from accounts.models import TokenScope
from api.auth import ApiRequest, member_project, requires_scope
from api.errors import ApiError
from api.memories import MemoryOut, actor_label
from api.schemas import InSchema
from conversations.commands import CommandError, detect_language, run_command, undo_forget
from conversations.models import Conversation

router = Router(tags=["commands"])


def _site_url(request: ApiRequest) -> str:
    """This server as the caller reached it; "" (SITE_URL) for a host Django does not serve
    or none (/mcp and /v1 run beside Django, which has not checked their Host)."""
    try:
        return request.build_absolute_uri("/").rstrip("/")
    except (DisallowedHost, KeyError):  # KeyError: no Host nor SERVER_NAME
        return ""


class CommandIn(InSchema):
    command: str = Field(
        ...,
        min_length=1,
        max_length=10_000,
        description="The text the user typed, e.g. /forget tabs",
    )
    project: int | str | None = Field(None, description="The chat's project (id or slug).")
    conversation_id: str | None = Field(None, description="Your conversation's external id.")
    language: Literal["en", "zh"] | None = Field(
        None, description="Reply language; by default from the text, then Accept-Language."
    )


class CommandOut(Schema):
    command: str
    reply: str = Field(..., description="Show this to the user.")
    language: str
    changed: bool
    memories: list[MemoryOut]
    undo_token: uuid.UUID | None = Field(None, description="POST it to /commands/undo to undo.")


class UndoIn(InSchema):
    undo_token: uuid.UUID
    language: Literal["en", "zh"] | None = None


class UndoOut(Schema):
    reply: str
    language: str
    memories: list[MemoryOut]


def refuse_limited_token(request: ApiRequest) -> None:
    """Commands read and change memories of every scope: not for a token with a limit."""
    if request.api_token is not None and request.api_token.limit:
        raise ApiError(
            "FORBIDDEN", "Slash commands need a token that is not limited to some memories."
        )


@router.post("/commands", response=CommandOut, summary="Run a slash command")
@requires_scope(TokenScope.WRITE)
def command(request: ApiRequest, payload: CommandIn) -> dict[str, Any]:
    refuse_limited_token(request)
    conversation = None
    if payload.conversation_id:
        conversation = Conversation.objects.filter(
            owner_id=request.user.pk, external_id=payload.conversation_id
        ).first()
    try:
        reply = run_command(
            request.user,
            payload.command,
            language=payload.language,
            accept_language=request.headers.get("Accept-Language", ""),
            project=member_project(request, payload.project) if payload.project else None,
            conversation=conversation,
            actor_label=actor_label(request),
            site_url=_site_url(request),
        )
    except CommandError as exc:
        raise ApiError(exc.code, exc.message) from exc
    return {
        "command": reply.command,
        "reply": reply.reply,
        "language": reply.language,
        "changed": reply.changed,
        "memories": reply.memories,
        "undo_token": reply.undo_token,
    }


@router.post("/commands/undo", response=UndoOut, summary="Undo a /forget")
@requires_scope(TokenScope.WRITE)
def command_undo(request: ApiRequest, payload: UndoIn) -> dict[str, Any]:
    refuse_limited_token(request)
    language = detect_language("", request.headers.get("Accept-Language", ""), payload.language)
    result = undo_forget(
        request.user, payload.undo_token, language=language, actor_label=actor_label(request)
    )
    if result is None:
        raise ApiError("NOT_FOUND", "No change of yours has this undo token.")
    reply, memories = result
    return {"reply": reply, "language": language, "memories": memories}
