"""Who read what: the access log as the /settings/access page and a memory's history show it.

Each row is one injection (recall.bookkeeping.record_access): which app asked (its API
token's name, or the browser session), when, for which message, and which memories and
past-conversation turns it received. A user sees their own rows only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Max, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import ApiToken
from conversations.models import Message
from memories.models import Memory
from memories.permissions import memories_visible_to
from recall.models import AccessLog

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The app filter's value for requests a signed-in browser made (no API token).
BROWSER = "browser"


def app_label(token_name: str | None) -> str:
    return token_name if token_name else _("browser session")


def apps_of(user: User) -> list[tuple[str, str]]:
    """The app filter's choices: the browser session, then the user's tokens."""
    tokens = ApiToken.objects.filter(user=user).order_by("name", "pk").values_list("pk", "name")
    return [(BROWSER, app_label(None)), *((str(pk), name) for pk, name in tokens)]


def access_rows(
    user: User, *, app: str = "", since: date | None = None, until: date | None = None
) -> QuerySet[AccessLog]:
    """The user's access log, newest first, narrowed to one app and a range of days."""
    rows = AccessLog.objects.filter(user=user).select_related("api_token", "conversation")
    if app == BROWSER:
        rows = rows.filter(api_token__isnull=True)
    elif app.isdigit():
        rows = rows.filter(api_token_id=int(app))
    zone = timezone.get_current_timezone()
    if since is not None:
        rows = rows.filter(created_at__gte=datetime.combine(since, time.min, tzinfo=zone))
    if until is not None:
        rows = rows.filter(created_at__lte=datetime.combine(until, time.max, tzinfo=zone))
    return rows.order_by("-created_at", "-pk")


@dataclass
class AccessEntry:
    log: AccessLog
    app: str
    memories: list[Memory]
    # Memories given then that the user can no longer see (deleted for good, or a project
    # they left).
    gone: int
    # The past turns given (of the user's own conversations), and how many were deleted since.
    turns: list[Message]
    turns_gone: int


def entries(user: User, logs: list[AccessLog]) -> list[AccessEntry]:
    """A page of rows with their memories, read in one query."""
    wanted = {memory_id for log in logs for memory_id in log.memory_ids}
    found = {m.pk: m for m in memories_visible_to(user).filter(pk__in=wanted)}
    turn_ids = {message_id for log in logs for message_id in log.message_ids}
    messages = {
        message.pk: message
        for message in Message.objects.filter(
            pk__in=turn_ids, conversation__owner=user
        ).select_related("conversation")
    }
    result = []
    for log in logs:
        memories = [found[pk] for pk in log.memory_ids if pk in found]
        turns = [messages[pk] for pk in log.message_ids if pk in messages]
        result.append(
            AccessEntry(
                log=log,
                app=app_label(log.api_token.name if log.api_token else None),
                memories=memories,
                gone=len(log.memory_ids) - len(memories),
                turns=turns,
                turns_gone=len(log.message_ids) - len(turns),
            )
        )
    return result


def memory_usage(user: User, memory_id: int) -> list[dict[str, Any]]:
    """Which of the user's apps were given the memory: how many times, and last when."""
    rows = (
        AccessLog.objects.filter(user=user, memory_ids__contains=[memory_id])
        .values("api_token_id", "api_token__name")
        .annotate(uses=Count("pk"), last=Max("created_at"))
        .order_by("-last")
    )
    return [
        {
            "app": app_label(row["api_token__name"]),
            "app_key": str(row["api_token_id"]) if row["api_token_id"] else BROWSER,
            "uses": row["uses"],
            "last": row["last"],
        }
        for row in rows
    ]
