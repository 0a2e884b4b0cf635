"""What a preview reads before it searches: the user's memory settings, the projects they may
read, and the people of their latest conversations (who a query may be about).

Read in one round trip, on the request's connection: read side by side on three connections,
the reads waited for each other's turn at the interpreter lock.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.contrib.postgres.expressions import ArraySubquery
from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast

from accounts.models import MemorySettings
from conversations.models import Conversation
from teams.permissions import projects_readable_by

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The conversations whose participants' names a query may mention (the latest first).
NAME_CONVERSATIONS = 200
# The users whose context statement a process keeps (``context_statement``): about 1 KB each.
CONTEXT_STATEMENTS = 1024


@dataclass(frozen=True)
class PastConversations:
    """The names of the people in the user's latest conversations (and in the current one),
    who a query may be about (``search.ranking.query_intent``), and whether there is any
    (not temporary) conversation at all."""

    names: set[str]
    any: bool


@dataclass(frozen=True)
class PreviewContext:
    memory_settings: MemorySettings
    project_ids: list[int]
    past: PastConversations


def latest_participants(user: User) -> QuerySet[Any, Any]:
    """The participants (as JSON text) of the user's NAME_CONVERSATIONS latest conversations."""
    return (
        Conversation.objects.filter(owner=user, temporary=False)
        .order_by("-created_at")
        .values_list(Cast("participants", TextField()), flat=True)[:NAME_CONVERSATIONS]
    )


def past_conversations(
    latest: Sequence[str], conversation: Conversation | None
) -> PastConversations:
    """``latest``: ``latest_participants``' rows."""
    # Each distinct list decoded once: most conversations have the same people.
    lists = [json.loads(participants) for participants in set(latest)]
    if conversation is not None:
        lists.append(conversation.participants)
    names = {
        str(participant["name"])
        for participants in lists
        if isinstance(participants, list)
        for participant in participants
        if isinstance(participant, dict) and participant.get("name")
    }
    return PastConversations(names, bool(latest))


@functools.lru_cache(maxsize=CONTEXT_STATEMENTS)
def context_statement(user_pk: int) -> tuple[str, tuple[Any, ...]]:
    """The SQL and parameters of ``preview_context``'s read for the user with ``user_pk``,
    made once per user: building and compiling the queryset took 1.4 of the read's 2.5 ms;
    preview p95 50.9 ms with it, 58.2 ms without (benchmarks/speed_tricks.py, 3 rounds at
    --scale 1: +12.5 %). Its SQL names only the user, whose settings, projects and
    conversations it reads anew each time."""
    user = get_user_model()(pk=user_pk)
    settings_with_context = MemorySettings.objects.filter(user_id=user_pk).annotate(
        readable_project_ids=ArraySubquery(projects_readable_by(user).values("id")),
        latest_participants=ArraySubquery(latest_participants(user)),
    )
    return settings_with_context.query.sql_with_params()


def preview_context(user: User, conversation: Conversation | None) -> PreviewContext:
    found = list(MemorySettings.objects.raw(*context_statement(user.pk)))
    if not found:  # Settings not made yet.
        MemorySettings.for_user(user)
        return preview_context(user, conversation)
    memory_settings = found[0]
    # The statement's columns beyond the model's fields, as raw() sets them.
    read = vars(memory_settings)
    return PreviewContext(
        memory_settings,
        read["readable_project_ids"],
        past_conversations(read["latest_participants"], conversation),
    )
