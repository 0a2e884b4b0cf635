"""POST /api/v1/injection-preview: the memories to put in the system prompt, and the block."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from django.http import HttpResponse
from ninja import Field, Router, Schema
from pydantic import BaseModel

from accounts.models import TokenScope
from api.auth import ApiRequest, member_project, requires_scope
from api.errors import ApiError
from api.schemas import ApiDateTime, Fraction, InSchema, JsonInt, StrictBool
from conversations.models import Conversation
from recall.injection import (
    DEFAULT_BUDGETS,
    DEFAULT_TOTAL_BUDGET,
    SOURCES,
    PreviewRequest,
    injection_preview,
)
from search.embeddings import embedding_status

router = Router(tags=["recall"])


class ScopeBudgets(InSchema):
    user: JsonInt = Field(DEFAULT_BUDGETS["user"], ge=0, le=100_000)
    project: JsonInt = Field(DEFAULT_BUDGETS["project"], ge=0, le=100_000)
    conversation: JsonInt = Field(DEFAULT_BUDGETS["conversation"], ge=0, le=100_000)


Source = Literal["memories", "episodes"]
DEFAULT_SOURCES: tuple[Source, ...] = ("memories", "episodes")
assert DEFAULT_SOURCES == SOURCES


class PreviewIn(InSchema):
    message: str = Field(..., max_length=20_000, description="The user's new message.")
    recent_messages: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="Earlier messages, oldest first; the last 3 join the query.",
    )
    conversation_id: str | None = Field(None, description="Your conversation's external id.")
    project: int | str | None = Field(None, description="Project id or slug: adds its memories.")
    temporary: StrictBool = Field(False, description="A private chat: nothing is injected.")
    budget: JsonInt = Field(DEFAULT_TOTAL_BUDGET, ge=0, le=100_000, description="Total tokens.")
    budgets: ScopeBudgets = Field(
        default_factory=lambda: ScopeBudgets.model_validate({}), description="Tokens per scope."
    )
    format: Literal["markdown", "xml", "json"] = "markdown"
    limit: JsonInt = Field(50, ge=1, le=200, description="Most memories to inject.")
    min_score: Fraction = 0.0
    dry_run: StrictBool = Field(False, description="Preview only: no use counted, no access log.")
    as_of: ApiDateTime | None = Field(None, description="Recall what was true then.")
    client: str = Field("", max_length=100, description="Your app's name, for the access log.")
    sources: list[Source] = Field(
        default_factory=lambda: list(DEFAULT_SOURCES),
        max_length=2,
        description="What to draw on: memories, and past conversations' turns (episodes; "
        "only when the user's 'Reference past conversations' setting is on).",
    )


# The preview's answer is built as plain dicts, so its schemas are plain pydantic models:
# ninja's Schema reads every field through a getter meant for ORM objects, which costs
# about 10 ms for a preview with a hundred or more memories.
class PreviewMemory(BaseModel):
    id: int
    kind: str
    scope: str
    project_id: int | None
    pinned: bool
    content: str
    score: float
    score_parts: dict[str, Any]
    tokens: int


class DroppedMemory(PreviewMemory):
    source: Literal["memory"] = "memory"
    reason: Literal["limit", "scope_budget", "total_budget"]


class PreviewTurn(BaseModel):
    message_id: int
    speaker: str
    sent_at: datetime
    text: str


class PreviewEpisode(BaseModel):
    """A past turn in the block's "From past conversations" section."""

    id: int = Field(..., description="The turn's message id.")
    message_id: int
    message_ids: list[int] = Field(
        ..., description="The turns shown, in order: reply_to's, this one, answered_by's."
    )
    conversation_id: int
    speaker: str
    role: str
    sent_at: datetime
    text: str
    reply_to: PreviewTurn | None = Field(None, description="The turn it answers, when shown.")
    answered_by: PreviewTurn | None = Field(
        None, description="The turn that answers it, when shown."
    )
    score: float
    score_parts: dict[str, Any]
    tokens: int


class DroppedEpisode(BaseModel):
    """A past turn left out of the block, and why: a memory injected came from it
    (``covered_by_memory``), another episode shows it already (``shown_with_another``), or
    the limit or the total budget."""

    source: Literal["episode"] = "episode"
    id: int = Field(..., description="The turn's message id.")
    message_ids: list[int]
    content: str
    score: float
    score_parts: dict[str, Any]
    tokens: int
    reason: Literal["covered_by_memory", "shown_with_another", "limit", "total_budget"]


class PreviewReference(BaseModel):
    """What a number in a cited block ([1], [2]…) stands for."""

    n: int
    id: int = Field(..., description="The memory's id.")
    kind: str
    url: str = Field(..., description="The memory on the memories page (a path).")


class PreviewOut(BaseModel):
    enabled: bool
    reason: str | None = Field(
        None, description="memory_disabled, privacy_paused or temporary_conversation"
    )
    message: str | None = Field(
        None, description="Why nothing is injected, for a person to read (with ``reason``)."
    )
    format: str
    block: str
    hash: str = Field(..., description="SHA-256 of the block (hex).")
    memories: list[PreviewMemory]
    references: list[PreviewReference] = Field(
        default_factory=list,
        description="With Show memory references on: each number of the block's memories.",
    )
    episodes: list[PreviewEpisode] = Field(default_factory=list)
    dropped: list[Annotated[DroppedMemory | DroppedEpisode, Field(discriminator="source")]] = Field(
        ..., description="What was found but left out, and why: memories and past turns."
    )
    tokens: dict[str, int]
    budget: dict[str, int]
    degraded: dict[str, str] | None
    dry_run: bool
    timing_ms: dict[str, float]


@router.post(
    "/injection-preview", response=PreviewOut, summary="Memories to inject before an LLM call"
)
@requires_scope(TokenScope.READ)
def preview(request: ApiRequest, payload: PreviewIn, response: HttpResponse) -> dict[str, Any]:
    conversation = None
    if payload.conversation_id:
        conversation = Conversation.objects.filter(
            owner_id=request.user.pk, external_id=payload.conversation_id
        ).first()
    result = injection_preview(
        request.user,
        PreviewRequest(
            message=payload.message,
            recent_messages=payload.recent_messages,
            conversation=conversation,
            project=member_project(request, payload.project) if payload.project else None,
            temporary=payload.temporary,
            budget=payload.budget,
            scope_budgets=payload.budgets.model_dump(),
            fmt=payload.format,
            limit=payload.limit,
            min_score=payload.min_score,
            dry_run=payload.dry_run,
            as_of=payload.as_of,
            sources=tuple(dict.fromkeys(payload.sources)),
        ),
        api_token=request.api_token,
        client=payload.client,
    )
    response["Server-Timing"] = f"recall;dur={result['timing_ms']['total_ms']}"
    return result


class EmbeddingStatusOut(Schema):
    ok: bool
    provider: str
    model: str
    dimensions: int
    stored_dimensions: int | None
    missing: int = Field(..., description="Memories waiting for a vector (counted up to 10,000).")


@router.get(
    "/embeddings",
    response=EmbeddingStatusOut,
    summary="Embedding provider status",
    openapi_extra={"responses": {503: {"description": "EMBEDDING_DIMENSION_CONFLICT"}}},
)
def embeddings(request: ApiRequest) -> dict[str, Any]:
    status = embedding_status()
    if not status["ok"]:
        raise ApiError(
            status["code"],
            status["error"],
            {key: status[key] for key in ("command", "dimensions", "stored_dimensions")},
        )
    return status
