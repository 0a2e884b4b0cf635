"""/settings/conversations: what chat applications sent in, the memories made from it, and
deleting it (one conversation, or all)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_http_methods

from accounts.http import AuthenticatedHttpRequest
from conversations import services
from conversations.listing import (
    conversation_messages,
    conversations_of,
    with_message_times,
)
from conversations.models import Conversation

CONVERSATIONS_PER_PAGE = 50
MESSAGES_PER_PAGE = 100


def _own_conversation(request: AuthenticatedHttpRequest, conversation_id: int) -> Conversation:
    """The user's own conversation; 404 for anyone else's, as if it did not exist."""
    return get_object_or_404(
        with_message_times(Conversation.objects.select_related("owner", "project")),
        pk=conversation_id,
        owner=request.user,
    )


def _retention() -> dict[str, int]:
    return {"retention_days": settings.MEMORY_MESSAGE_RETENTION_DAYS}


@login_required
@require_GET
def conversation_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    page = Paginator(conversations_of(request.user), CONVERSATIONS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    return render(
        request,
        "conversations/conversation_list.html",
        {"page": page, "conversations": page.object_list, **_retention()},
    )


@login_required
@require_GET
def conversation_detail(request: AuthenticatedHttpRequest, conversation_id: int) -> HttpResponse:
    conversation = _own_conversation(request, conversation_id)
    page = Paginator(conversation.messages.order_by("position"), MESSAGES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    rows, memories = conversation_messages(conversation, list(page.object_list), request.user)
    return render(
        request,
        "conversations/conversation_detail.html",
        {
            "conversation": conversation,
            "page": page,
            "rows": rows,
            "memories": memories,
            **_retention(),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def conversation_delete(request: AuthenticatedHttpRequest, conversation_id: int) -> HttpResponse:
    """Delete one conversation after a confirmation; the memories made from it stay."""
    conversation = _own_conversation(request, conversation_id)
    if request.method == "POST" and request.POST.get("confirm") == "delete":
        services.conversation_delete(conversation)
        messages.success(request, _("Conversation deleted. The memories made from it stay."))
        return redirect("conversation-list")
    return render(request, "conversations/conversation_delete.html", {"conversation": conversation})


@login_required
@require_http_methods(["GET", "POST"])
def conversation_delete_all(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Delete every conversation after a confirmation naming how many."""
    count = Conversation.objects.filter(owner=request.user).count()
    if request.method == "POST" and request.POST.get("count") == str(count) and count:
        deleted = services.conversations_delete_all(request.user)
        messages.success(
            request,
            ngettext(
                "%(count)d conversation deleted. The memories made from it stay.",
                "%(count)d conversations deleted. The memories made from them stay.",
                deleted,
            )
            % {"count": deleted},
        )
        return redirect("conversation-list")
    return render(
        request,
        "conversations/conversation_delete_all.html",
        {"count": count, "changed": request.method == "POST"},
        status=409 if request.method == "POST" else 200,
    )
