"""The review queue: pending extracted memories with their evidence; accept, edit, reject."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from accounts.http import HTMX_INVALID_INPUT, AuthenticatedHttpRequest
from conversations.review import review_items
from memories.models import Kind, Memory
from memories.permissions import memories_reviewable_by, memories_visible_to
from memories.services import memory_reject, memory_review_accept

PAGE_SIZE = 50
MAX_CONTENT_CHARS = 2000


def _reviewable_or_error(request: AuthenticatedHttpRequest, memory_id: int) -> Memory:
    """The pending memory, 404 when the user cannot see it, 403 when they may not review it."""
    memory = memories_reviewable_by(request.user).filter(pk=memory_id).first()
    if memory is not None:
        return memory
    if (
        memories_visible_to(request.user, Memory.objects.pending_review())
        .filter(pk=memory_id)
        .exists()
    ):
        raise PermissionDenied(
            "Only the project's owners and admins review its memories, and not once it is archived."
        )
    raise Http404("No such pending memory.")


def _done(request: AuthenticatedHttpRequest, memory: Memory, verdict: str) -> HttpResponse:
    if request.htmx:
        return render(
            request,
            "conversations/partials/review_item_done.html",
            # The heading's count follows (out of band): what is left to review.
            {
                "memory": memory,
                "verdict": verdict,
                "total": memories_reviewable_by(request.user).count(),
            },
        )
    messages.success(request, f"{verdict}: {memory.content[:80]}")
    return redirect("review-list")


@login_required
@require_GET
def review_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    queryset = memories_reviewable_by(request.user).select_related(
        "owner", "project", "conversation"
    )
    memories = list(queryset.order_by("created_at", "id")[:PAGE_SIZE])
    return render(
        request,
        "conversations/review.html",
        {"items": review_items(memories), "total": queryset.count(), "kinds": Kind.choices},
    )


@login_required
@require_POST
def review_accept(request: AuthenticatedHttpRequest, memory_id: int) -> HttpResponse:
    memory = _reviewable_or_error(request, memory_id)
    memory = memory_review_accept(memory=memory, actor=request.user)
    return _done(request, memory, _("Accepted"))


@login_required
@require_POST
def review_edit(request: AuthenticatedHttpRequest, memory_id: int) -> HttpResponse:
    memory = _reviewable_or_error(request, memory_id)
    content = request.POST.get("content", "").strip()
    kind = request.POST.get("kind", memory.kind)
    if not content or len(content) > MAX_CONTENT_CHARS or kind not in Kind.values:
        error = _("Write the memory (at most %(n)s characters) and pick a kind.") % {
            "n": MAX_CONTENT_CHARS
        }
        if request.htmx:
            item = review_items([memory])[0]
            return render(
                request,
                "conversations/partials/review_item.html",
                {"item": item, "kinds": Kind.choices, "error": error, "draft": content},
                status=HTMX_INVALID_INPUT,
            )
        messages.error(request, error)
        return redirect("review-list")
    memory = memory_review_accept(
        memory=memory,
        actor=request.user,
        changes={"content": content, "kind": kind},
    )
    return _done(request, memory, _("Edited and accepted"))


@login_required
@require_POST
def review_reject(request: AuthenticatedHttpRequest, memory_id: int) -> HttpResponse:
    memory = _reviewable_or_error(request, memory_id)
    memory = memory_reject(memory=memory, actor=request.user)
    return _done(request, memory, _("Rejected"))


@login_required
@require_POST
def review_bulk(request: AuthenticatedHttpRequest) -> HttpResponse:
    action = request.POST.get("action")
    ids = [int(value) for value in request.POST.getlist("ids") if value.isdigit()]
    if action not in ("accept", "reject") or not ids:
        messages.error(request, _("Select memories, then accept or reject them."))
        return redirect("review-list")
    memories = list(memories_reviewable_by(request.user).filter(pk__in=ids))
    for memory in memories:
        if action == "accept":
            memory_review_accept(memory=memory, actor=request.user)
        else:
            memory_reject(memory=memory, actor=request.user)
    text = (
        ngettext("%(n)s memory accepted.", "%(n)s memories accepted.", len(memories))
        if action == "accept"
        else ngettext("%(n)s memory rejected.", "%(n)s memories rejected.", len(memories))
    )
    messages.success(request, text % {"n": len(memories)})
    return redirect("review-list")
