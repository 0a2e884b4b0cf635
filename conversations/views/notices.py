"""Undo and dismiss for the "Memory updated" notice (conversations.notices)."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django_htmx.http import trigger_client_event

from accounts.http import AuthenticatedHttpRequest
from accounts.models import MemorySettings
from conversations.notices import batch_belongs_to, undo_label
from conversations.templatetags.extraction_notices import notice_context
from memories.services import memory_undo_batch

DEFAULT_NEXT = "/settings/memories"


def _back(request: AuthenticatedHttpRequest, toast: str = "") -> HttpResponse:
    if request.htmx:
        context = notice_context(request) | {"toast": toast}
        response = render(request, "conversations/partials/extraction_notice.html", context)
        # The memories page's list, tabs and counts reload to show what the undo changed.
        return trigger_client_event(response, "memories-reload") if toast else response
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        target = DEFAULT_NEXT
    return redirect(target)


@login_required
@require_POST
def notice_undo(request: AuthenticatedHttpRequest, batch: uuid.UUID) -> HttpResponse:
    if not batch_belongs_to(batch, request.user):
        raise Http404("No such change of yours.")
    memory_undo_batch(batch=batch, actor=request.user, actor_label=undo_label(batch))
    message = _("Undone: the memories are back as they were.")
    if not request.htmx:
        messages.success(request, message)
    return _back(request, toast=message)


@login_required
@require_POST
def notice_dismiss(request: AuthenticatedHttpRequest) -> HttpResponse:
    memory_settings = MemorySettings.for_user(request.user)
    memory_settings.notices_seen_at = timezone.now()
    memory_settings.save(update_fields=["notices_seen_at", "updated_at"])
    return _back(request)
