"""Ingestion: conversations and their messages in, extraction runs out.

Paths name a conversation by **our id** (``id`` in every conversation
response). ``POST /conversations`` is idempotent by ``external_id``, so a
client that only keeps its own ids gets ours back by posting again.
Messages are idempotent by their ``external_id`` within the conversation:
a batch sent twice is stored once, and positions follow the order received.
``end``, ``summary`` and ``extract`` answer at once (202) with the queued
extraction run; ``GET /extraction-runs/<id>`` reports its state and result.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.db import transaction
from django.utils import timezone
from ninja import Field, Router, Schema, Status

from accounts.models import TokenLimit, TokenScope
from api.auth import ApiRequest, conversation_in_limit, requires_scope, writable_project
from api.errors import ApiError
from api.schemas import ApiDateTime, InSchema, StrictBool
from conversations.extraction.runs import (
    extraction_request,
    retry_schedule_name,
)
from conversations.models import Conversation, ExtractionRun, ExtractionTrigger, RunStatus
from conversations.services import NewMessage, add_messages
from memories.models import Scope
from memories.permissions import token_limit_covers
from memories.sensitive import redact
from teams.models import Project

router = Router(tags=["conversations"])

MAX_MESSAGES_PER_BATCH = 500


class Participant(InSchema):
    name: str = Field(min_length=1, max_length=100)
    role: Literal["user", "assistant", "system", "tool"] = Field(
        "user", description="The role of this participant's messages."
    )
    is_account_user: StrictBool = Field(
        False, description="True for the person whose account this is (at most one)."
    )


MAX_PARTICIPANTS = 20


class ConversationIn(InSchema):
    external_id: str = Field(min_length=1, max_length=200)
    title: str = Field("", max_length=300)
    project: str | int | None = Field(
        None,
        description=(
            "A project's slug or id you can write to (default: none, a personal conversation; "
            "for a token limited to one project, that project)."
        ),
    )
    temporary: StrictBool = Field(False, description="Privacy mode: nothing is extracted.")
    client: str = Field("", max_length=100)
    participants: list[Participant] | None = Field(
        None,
        max_length=MAX_PARTICIPANTS,
        description=(
            "Who takes part. Memories about someone other than the account's user name them. "
            "Default: the account's name for `user` messages, Assistant for `assistant` ones. "
            "Posting again with participants replaces them."
        ),
    )


class ConversationOut(Schema):
    id: int
    external_id: str
    title: str
    project: str | None
    temporary: bool
    client: str
    participants: list[Participant]
    message_count: int
    extracted_through: int
    ended_at: datetime | None
    created_at: datetime


class MessageIn(InSchema):
    external_id: str = Field(min_length=1, max_length=200)
    role: Literal["user", "assistant", "system", "tool"]
    content: str = Field(min_length=1, max_length=100_000)
    sent_at: ApiDateTime | None = Field(
        None, description="When it was said (default: now); dates in memories count from it."
    )
    speaker: str = Field(
        "",
        max_length=100,
        description="A participant's name, when the role alone does not say who spoke.",
    )


class MessagesIn(InSchema):
    messages: list[MessageIn] = Field(min_length=1, max_length=MAX_MESSAGES_PER_BATCH)


class StoredMessageOut(Schema):
    external_id: str
    position: int
    stored: bool = Field(description="False when a message with this external_id existed.")


class RunOut(Schema):
    id: int
    conversation_id: int
    trigger: str
    extractor: str
    status: str
    skip_reason: str
    window_first: int | None
    window_last: int | None
    candidates: int
    created: int
    merged: int
    superseded: int
    skipped: int
    dropped_sensitive: int
    attempts: int
    duration_ms: int | None
    error: str
    retry_at: datetime | None
    task_id: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class MessagesOut(Schema):
    conversation_id: int
    stored: int
    duplicates: int
    messages: list[StoredMessageOut]
    extraction_run: RunOut | None


class SummaryIn(InSchema):
    summary: str = Field(
        min_length=1,
        max_length=50_000,
        description="Markdown with ## Goal, ## Instructions, ## Discoveries, ## Accomplished.",
    )


def _conversation_out(conversation: Conversation) -> dict[str, Any]:
    return {
        "id": conversation.pk,
        "external_id": conversation.external_id,
        "title": conversation.title,
        "project": conversation.project.slug if conversation.project else None,
        "temporary": conversation.temporary,
        "client": conversation.client,
        "participants": conversation.participants,
        "message_count": conversation.messages.count(),
        "extracted_through": conversation.extracted_through,
        "ended_at": conversation.ended_at,
        "created_at": conversation.created_at,
    }


def run_out(run: ExtractionRun) -> dict[str, Any]:
    from django_q.models import Schedule

    retry_at = None
    if run.status == RunStatus.FAILED:
        retry_at = (
            Schedule.objects.filter(name=retry_schedule_name(run.pk))
            .values_list("next_run", flat=True)
            .first()
        )
    fields = {name: getattr(run, name) for name in RunOut.model_fields if hasattr(run, name)}
    return {**fields, "conversation_id": run.conversation_id, "retry_at": retry_at}


def _new_conversation_project(request: ApiRequest, reference: str | int | None) -> Project | None:
    """The project a new conversation belongs to: the one named, else the project of a token
    limited to one (as the preview's), else none: a personal conversation, which a token
    limited to a project may not start."""
    token = request.api_token
    if reference is None and token is not None and token.limit == TokenLimit.PROJECT:
        reference = token.limit_project_id
    if reference is not None:
        return writable_project(request, reference, things="conversations")
    if not token_limit_covers(token, Scope.USER, None):
        raise ApiError("FORBIDDEN", "This token may not add personal conversations (its limit).")
    return None


def _own_conversation(
    request: ApiRequest, conversation_id: int, *, lock: bool = False
) -> Conversation:
    """The caller's conversation, if its token's limit covers it; 404 for any other."""
    conversations = Conversation.objects.filter(owner_id=request.user.pk)
    if lock:
        conversations = conversations.select_for_update(of=("self",))
    conversation = conversations.select_related("project").filter(pk=conversation_id).first()
    if conversation is None or not conversation_in_limit(request, conversation):
        raise ApiError("NOT_FOUND", f"No conversation {conversation_id} of yours.")
    return conversation


def _participants(participants: list[Participant] | None) -> list[dict[str, Any]] | None:
    if participants is None:
        return None
    names = [participant.name for participant in participants]
    if len(set(names)) != len(names):
        raise ApiError("VALIDATION_ERROR", "Each participant needs a name of their own.")
    if sum(participant.is_account_user for participant in participants) > 1:
        raise ApiError("VALIDATION_ERROR", "At most one participant is the account's user.")
    return [participant.model_dump() for participant in participants]


@router.post(
    "/conversations",
    response={200: ConversationOut, 201: ConversationOut},
    summary="Start a conversation (idempotent by external_id)",
)
@requires_scope(TokenScope.INGEST)
def conversation_create(request: ApiRequest, payload: ConversationIn) -> Status[dict[str, Any]]:
    participants = _participants(payload.participants)
    existing = Conversation.objects.filter(
        owner_id=request.user.pk, external_id=payload.external_id
    ).first()
    if existing is not None:
        if not conversation_in_limit(request, existing):
            raise ApiError("FORBIDDEN", "This token may not use this conversation (its limit).")
        if participants is not None and participants != existing.participants:
            existing.participants = participants
            existing.save(update_fields=["participants", "updated_at"])
        return Status(200, _conversation_out(existing))
    project = _new_conversation_project(request, payload.project)
    conversation, created = Conversation.objects.get_or_create(
        owner_id=request.user.pk,
        external_id=payload.external_id,
        defaults={
            "title": payload.title,
            "project": project,
            "temporary": payload.temporary,
            "client": payload.client,
            "participants": participants or [],
        },
    )
    return Status(201 if created else 200, _conversation_out(conversation))


@router.get("/conversations/{conversation_id}", response=ConversationOut, summary="A conversation")
@requires_scope(TokenScope.INGEST)
def conversation_detail(request: ApiRequest, conversation_id: int) -> dict[str, Any]:
    return _conversation_out(_own_conversation(request, conversation_id))


@router.post(
    "/conversations/{conversation_id}/messages",
    response=MessagesOut,
    summary="Add a batch of messages (idempotent by external_id)",
)
@requires_scope(TokenScope.INGEST)
def messages_add(request: ApiRequest, conversation_id: int, payload: MessagesIn) -> dict[str, Any]:
    _own_conversation(request, conversation_id)
    try:
        added = add_messages(
            request.user,
            conversation_id,
            [NewMessage(**message.model_dump()) for message in payload.messages],
        )
    except Conversation.DoesNotExist:
        raise ApiError("NOT_FOUND", f"No conversation {conversation_id} of yours.") from None
    if added.run is not None:
        added.run.refresh_from_db()
    return {
        "conversation_id": added.conversation.pk,
        "stored": added.stored,
        "duplicates": len(payload.messages) - added.stored,
        "messages": [
            {
                "external_id": external_id,
                "position": position,
                "stored": external_id not in added.duplicates,
            }
            for external_id, position in added.positions.items()
        ],
        "extraction_run": run_out(added.run) if added.run is not None else None,
    }


def _queued(run: ExtractionRun) -> Status[dict[str, Any]]:
    run.refresh_from_db()
    return Status(202, run_out(run))


@router.post(
    "/conversations/{conversation_id}/end",
    response={202: RunOut},
    summary="The conversation is over: extract what is left",
)
@requires_scope(TokenScope.INGEST)
def conversation_end(request: ApiRequest, conversation_id: int) -> Status[dict[str, Any]]:
    with transaction.atomic():
        conversation = _own_conversation(request, conversation_id, lock=True)
        previous = conversation.extraction_runs.filter(trigger=ExtractionTrigger.END).first()
        # A run not started yet reads every unread message (with follow-ups): the end joins
        # it instead of queueing a second job that would find nothing left.
        waiting = conversation.extraction_runs.filter(status=RunStatus.QUEUED, summary="").first()
        if conversation.ended_at is not None and previous is not None:
            run = previous
        else:
            conversation.ended_at = conversation.ended_at or timezone.now()
            conversation.save(update_fields=["ended_at", "updated_at"])
            run = waiting or extraction_request(
                conversation=conversation, trigger=ExtractionTrigger.END
            )
    return _queued(run)


@router.post(
    "/conversations/{conversation_id}/summary",
    response={202: RunOut},
    summary="A compaction summary to extract from",
)
@requires_scope(TokenScope.INGEST)
def conversation_summary(
    request: ApiRequest, conversation_id: int, payload: SummaryIn
) -> Status[dict[str, Any]]:
    with transaction.atomic():
        conversation = _own_conversation(request, conversation_id)
        run = extraction_request(
            conversation=conversation,
            trigger=ExtractionTrigger.SUMMARY,
            summary=redact(payload.summary)[0],
        )
    return _queued(run)


@router.post(
    "/conversations/{conversation_id}/extract",
    response={202: RunOut},
    summary="Extract now",
)
@requires_scope(TokenScope.INGEST)
def conversation_extract(request: ApiRequest, conversation_id: int) -> Status[dict[str, Any]]:
    with transaction.atomic():
        conversation = _own_conversation(request, conversation_id)
        run = extraction_request(conversation=conversation, trigger=ExtractionTrigger.MANUAL)
    return _queued(run)


@router.get("/extraction-runs/{run_id}", response=RunOut, summary="An extraction run's state")
@requires_scope(TokenScope.INGEST)
def extraction_run_detail(request: ApiRequest, run_id: int) -> dict[str, Any]:
    run = (
        ExtractionRun.objects.filter(pk=run_id, conversation__owner_id=request.user.pk)
        .select_related("conversation")
        .first()
    )
    if run is None or not conversation_in_limit(request, run.conversation):
        raise ApiError("NOT_FOUND", f"No extraction run {run_id} of yours.")
    return run_out(run)
