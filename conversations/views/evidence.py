"""/settings/memories/<id>/evidence: the messages a memory came from."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.views.decorators.http import require_GET

from accounts.http import AuthenticatedHttpRequest
from conversations.evidence import evidence_of
from memories.views.memories import memory_panel, visible_memory


@login_required
@require_GET
def memory_evidence(request: AuthenticatedHttpRequest, memory_id: int) -> HttpResponse:
    memory = visible_memory(request, memory_id)
    return memory_panel(
        request,
        memory,
        "memories/partials/_memory_evidence.html",
        {"evidence": evidence_of(memory, request.user)},
    )
