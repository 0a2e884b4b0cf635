"""/api/v1/memories: list, get, create, update, delete, restore, search, stats, history.

A memory the caller may not see answers 404 whatever the endpoint, so a
stranger cannot even learn that it exists; one they may see but not change
(a project viewer) answers 403.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from django.db.models import Count, Q
from django.utils.dateparse import parse_datetime
from ninja import Field, Query, Router, Schema, Status
from pydantic import WithJsonSchema, field_validator

from accounts.models import MemorySettings, TokenScope
from api.auth import (
    ApiRequest,
    conversation_in_limit,
    member_project,
    requires_scope,
    writable_project,
)
from api.errors import ApiError
from api.schemas import ApiDateTime, Fraction, InSchema, JsonInt, StrictBool, Tag
from conversations.models import Conversation
from memories import services
from memories.filters import MemoryFilters, clean_tag
from memories.models import KIND_ALIASES, LISTED_STATES, Kind, Memory, MemoryQuerySet, Scope
from memories.permissions import (
    can_change_memory,
    memories_for_token,
    memories_visible_to,
    token_limit_covers,
)
from memories.search import search_memories
from search.embeddings import fallback_degraded

router = Router(tags=["memories"])

MAX_CONTENT = 10_000
# Spelt out for the OpenAPI schema; the conditions are models.STATE_CONDITIONS.
States = Literal["active", "pending", "rejected", "trash", "forgotten", "all"]
assert set(get_args(States)) == {*LISTED_STATES, "all"}, "api States out of step with the model"


# What a kind may be written as (in any case): a kind, or an alias of one.
KindName = Annotated[
    str, WithJsonSchema({"type": "string", "enum": sorted({*Kind.values, *KIND_ALIASES})})
]
# A page cursor (``_encode_cursor``): base64url without padding.
CURSOR_PATTERN = "^[A-Za-z0-9_-]+$"


def normalise_kind(value: str) -> str:
    kind = value.strip().lower()
    kind = KIND_ALIASES.get(kind, kind)
    if kind not in Kind.values:
        raise ValueError(f"unknown kind; use one of {', '.join(Kind.values)}")
    return str(kind)


class MemoryOut(Schema):
    id: int
    kind: str
    scope: str
    project_id: int | None
    conversation_id: int | None
    content: str
    tags: list[str]
    importance: float
    confidence: float
    origin: str
    pinned: bool
    status: str
    state: str
    valid_from: datetime
    valid_until: datetime | None
    superseded_by_id: int | None
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime | None
    access_count: int
    revision: int
    evidence: list[dict[str, Any]]
    metadata: dict[str, Any]
    embedding_model: str


class MemoryPage(Schema):
    items: list[MemoryOut]
    next_cursor: str | None = Field(None, description="Pass as `cursor` for the next page.")


class MemoryIn(InSchema):
    content: str = Field(..., min_length=1, max_length=MAX_CONTENT)
    kind: KindName = "fact"
    scope: Literal["user", "project", "conversation"] = "user"
    project: int | str | None = Field(None, description="Project id or slug (scope=project).")
    conversation_id: str | None = Field(None, description="Your conversation's external id.")
    tags: list[Tag] = Field(default_factory=list, max_length=50)
    importance: Fraction | None = None
    confidence: Fraction = 0.8
    pinned: StrictBool = False

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        return normalise_kind(value)


class MemoryPatch(InSchema):
    revision: JsonInt = Field(
        ..., description="The revision you read; a stale one gets 409 CONFLICT."
    )
    content: str | None = Field(None, min_length=1, max_length=MAX_CONTENT)
    kind: KindName | None = None
    tags: list[Tag] | None = Field(None, max_length=50)
    importance: Fraction | None = None
    confidence: Fraction | None = None
    pinned: StrictBool | None = None

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str | None) -> str | None:
        return None if value is None else normalise_kind(value)


class ListFilters(Schema):
    state: States = "active"
    kind: KindName | None = None
    scope: Literal["user", "project", "conversation"] | None = None
    project: int | str | None = None
    tag: str | None = None
    created_after: ApiDateTime | None = None
    created_before: ApiDateTime | None = None
    cursor: str | None = Field(
        None, pattern=CURSOR_PATTERN, max_length=200, description="A page's `next_cursor`."
    )
    limit: int = Field(50, ge=1, le=200)


class SearchParams(Schema):
    q: str = Field(..., min_length=1, max_length=2000)
    kind: KindName | None = None
    scope: Literal["user", "project", "conversation"] | None = None
    project: int | str | None = None
    tag: str | None = None
    created_after: ApiDateTime | None = None
    created_before: ApiDateTime | None = None
    as_of: ApiDateTime | None = Field(None, description="What was true then (default now).")
    limit: int = Field(20, ge=1, le=100)
    min_score: float = Field(0.0, ge=0, le=1)


class SearchHit(Schema):
    memory: MemoryOut
    score: float
    score_parts: dict[str, Any]


class SearchOut(Schema):
    results: list[SearchHit]
    degraded: dict[str, str] | None
    timing_ms: dict[str, float]


class StatsOut(Schema):
    total: int
    by_kind: dict[str, int]
    by_scope: dict[str, int]
    by_state: dict[str, int]


class EventOut(Schema):
    id: int
    action: str
    actor: str
    batch: str | None
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    created_at: datetime


class HistoryOut(Schema):
    memory_id: int
    events: list[EventOut]


# Access helpers -------------------------------------------------------------


def actor_label(request: ApiRequest) -> str:
    token = request.api_token
    return f"API token “{token.name}”" if token else ""


def visible_memories(request: ApiRequest) -> MemoryQuerySet:
    """What the caller sees: the user's memories, narrowed to its token's limit."""
    return memories_for_token(memories_visible_to(request.user), request.api_token)


def visible_memory(request: ApiRequest, memory_id: int) -> Memory:
    memory = visible_memories(request).filter(pk=memory_id).first()
    if memory is None:
        raise ApiError("NOT_FOUND", f"No memory {memory_id}.")
    return memory


def writable_memory(request: ApiRequest, memory_id: int) -> Memory:
    memory = visible_memory(request, memory_id)
    if not can_change_memory(request.user, memory):
        raise ApiError("FORBIDDEN", "You may read this project's memories but not change them.")
    return memory


def require_memory_enabled(request: ApiRequest) -> None:
    if not MemorySettings.for_user(request.user).memory_enabled:
        raise ApiError(
            "MEMORY_DISABLED",
            "Memory is off for this account, its projects' memories included; "
            "turn it on at /settings/memories.",
        )


def filters_from(request: ApiRequest, params: ListFilters | SearchParams) -> MemoryFilters:
    """The API's list or search parameters as the filters the pages and recall use."""
    return MemoryFilters(
        q=params.q if isinstance(params, SearchParams) else "",
        kinds=(_kind_param(params.kind),) if params.kind else (),
        scopes=(params.scope,) if params.scope else (),
        project_ids=(member_project(request, params.project).pk,) if params.project else (),
        tags=(clean_tag(params.tag),) if params.tag else (),
        created_after=params.created_after,
        created_before=params.created_before,
        state=params.state if isinstance(params, ListFilters) else "active",
    )


def _kind_param(value: str) -> str:
    try:
        return normalise_kind(value)
    except ValueError as exc:
        raise ApiError("VALIDATION_ERROR", str(exc), {"fields": [{"field": "kind"}]}) from exc


def _encode_cursor(memory: Memory) -> str:
    raw = f"{memory.created_at.isoformat()}|{memory.pk}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created, memory_id = raw.split("|")
        when = parse_datetime(created)
        if when is None:
            raise ValueError(created)
        return when, int(memory_id)
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise ApiError("VALIDATION_ERROR", "The cursor is not valid.") from exc


# Endpoints ------------------------------------------------------------------


@router.get("/memories", response=MemoryPage, summary="List memories (newest first)")
@requires_scope(TokenScope.READ)
def memory_list(request: ApiRequest, params: Query[ListFilters]) -> dict[str, Any]:
    filters = filters_from(request, params)
    memories = filters.narrow(filters.in_state(visible_memories(request)))
    if params.cursor:
        created, memory_id = _decode_cursor(params.cursor)
        memories = memories.filter(
            Q(created_at__lt=created) | Q(created_at=created, pk__lt=memory_id)
        )
    page = list(
        memories.defer("embedding", "search_vector", "search_document").order_by(
            "-created_at", "-id"
        )[: params.limit + 1]
    )
    more = len(page) > params.limit
    page = page[: params.limit]
    return {"items": page, "next_cursor": _encode_cursor(page[-1]) if more else None}


@router.post("/memories", response={201: MemoryOut}, summary="Add a memory")
@requires_scope(TokenScope.WRITE)
def memory_create(request: ApiRequest, payload: MemoryIn) -> Status[Memory]:
    require_memory_enabled(request)
    project = None
    if payload.scope == Scope.PROJECT:
        if payload.project is None:
            raise ApiError(
                "VALIDATION_ERROR",
                "A project memory needs a project.",
                {"fields": [{"field": "project", "message": "required for scope=project"}]},
            )
        project = writable_project(request, payload.project, things="memories")
    elif not token_limit_covers(request.api_token, payload.scope, None):
        raise ApiError("FORBIDDEN", "This token may not add personal memories (its limit).")
    conversation = None
    if payload.conversation_id:
        conversation = Conversation.objects.filter(
            owner_id=request.user.pk, external_id=payload.conversation_id
        ).first()
        if conversation is None or not conversation_in_limit(request, conversation):
            raise ApiError("NOT_FOUND", f"No conversation {payload.conversation_id}.")
    elif payload.scope == Scope.CONVERSATION:
        raise ApiError(
            "VALIDATION_ERROR",
            "A conversation memory needs a conversation_id.",
            {
                "fields": [
                    {"field": "conversation_id", "message": "required for scope=conversation"}
                ]
            },
        )
    memory = services.memory_create(
        owner=request.user,
        content=payload.content,
        kind=payload.kind,
        scope=payload.scope,
        project=project,
        conversation=conversation,
        tags=payload.tags,
        importance=payload.importance,
        confidence=payload.confidence,
        pinned=payload.pinned,
        actor=request.user,
        actor_label=actor_label(request),
    )
    return Status(201, memory)


@router.get("/memories/search", response=SearchOut, summary="Search memories (hybrid)")
@requires_scope(TokenScope.READ)
def memory_search(request: ApiRequest, params: Query[SearchParams]) -> dict[str, Any]:
    filters = filters_from(request, params)
    result = search_memories(
        request.user,
        filters.q,
        as_of=params.as_of,
        base_queryset=(
            memories_for_token(Memory.objects.in_effect(params.as_of), request.api_token)
            if request.api_token is not None and request.api_token.limit
            else None
        ),
        filters=filters,
        limit=params.limit,
        min_score=params.min_score,
    )
    return {
        "results": [
            {"memory": item.memory, "score": item.score, "score_parts": item.parts}
            for item in result.memories
        ],
        "degraded": result.degraded.as_dict() if result.degraded else fallback_degraded(),
        "timing_ms": result.timings_ms,
    }


@router.get("/memories/stats", response=StatsOut, summary="Counts by kind, scope and state")
@requires_scope(TokenScope.READ)
def memory_stats(request: ApiRequest) -> dict[str, Any]:
    memories = visible_memories(request)
    in_effect = memories.active()
    states = {state: memories.in_state(state).count() for state in LISTED_STATES}
    by_kind = dict(in_effect.values_list("kind").annotate(n=Count("id")).order_by())
    by_scope = dict(in_effect.values_list("scope").annotate(n=Count("id")).order_by())
    return {
        "total": sum(states.values()),
        "by_kind": {kind: by_kind.get(kind, 0) for kind in Kind.values},
        "by_scope": {scope: by_scope.get(scope, 0) for scope in Scope.values},
        "by_state": states,
    }


@router.get("/memories/{memory_id}", response=MemoryOut, summary="One memory")
@requires_scope(TokenScope.READ)
def memory_get(request: ApiRequest, memory_id: int) -> Memory:
    return visible_memory(request, memory_id)


@router.patch(
    "/memories/{memory_id}",
    response={200: MemoryOut},
    summary="Edit a memory (send the revision you read)",
    openapi_extra={"responses": {409: {"description": "CONFLICT: stale revision"}}},
)
@requires_scope(TokenScope.WRITE)
def memory_update(request: ApiRequest, memory_id: int, payload: MemoryPatch) -> Memory:
    memory = writable_memory(request, memory_id)
    changes = payload.model_dump(exclude_unset=True, exclude={"revision"})
    changes = {field: value for field, value in changes.items() if value is not None}
    try:
        return services.memory_update(
            memory=memory,
            changes=changes,
            expected_revision=payload.revision,
            actor=request.user,
            actor_label=actor_label(request),
        )
    except services.MemoryConflict as conflict:
        raise ApiError(
            "CONFLICT",
            f"The memory changed since revision {payload.revision}; it is at "
            f"revision {conflict.current.revision}. Re-read it and send your change again.",
            {"current": MemoryOut.from_orm(conflict.current).model_dump(mode="json")},
        ) from None


@router.delete("/memories/{memory_id}", response=MemoryOut, summary="Move to the trash")
@requires_scope(TokenScope.WRITE)
def memory_delete(request: ApiRequest, memory_id: int) -> Memory:
    memory = writable_memory(request, memory_id)
    return services.memory_delete(
        memory=memory, actor=request.user, actor_label=actor_label(request)
    )


@router.post(
    "/memories/{memory_id}/restore", response=MemoryOut, summary="Restore from trash or forgetting"
)
@requires_scope(TokenScope.WRITE)
def memory_restore(request: ApiRequest, memory_id: int) -> Memory:
    memory = writable_memory(request, memory_id)
    return services.memory_restore(
        memory=memory, actor=request.user, actor_label=actor_label(request)
    )


@router.get("/memories/{memory_id}/history", response=HistoryOut, summary="Every change")
@requires_scope(TokenScope.READ)
def memory_history(request: ApiRequest, memory_id: int) -> dict[str, Any]:
    memory = visible_memory(request, memory_id)
    events = memory.events.select_related("actor")
    return {
        "memory_id": memory.pk,
        "events": [
            {
                "id": event.pk,
                "action": event.action,
                "actor": event.actor_name,
                "batch": str(event.batch) if event.batch else None,
                "before": event.before,
                "after": event.after,
                "created_at": event.created_at,
            }
            for event in events
        ],
    }
