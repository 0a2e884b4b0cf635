"""/projects/<slug>/activity: who changed what in a project's shared memories."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from accounts.http import AuthenticatedHttpRequest
from memories.memory_history import activity_items, project_events
from teams.access import get_project_for_member

ACTIVITY_PAGE_SIZE = 30


@login_required
@require_GET
def project_activity(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    project, role = get_project_for_member(request, slug)
    page = Paginator(project_events(project), ACTIVITY_PAGE_SIZE).get_page(request.GET.get("page"))
    items = activity_items(page, reverse("project-memories", args=[project.slug]))
    return render(
        request,
        "memories/project_activity.html",
        {"project": project, "role": role, "page": page, "items": items},
    )
