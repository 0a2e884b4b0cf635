"""The "Memory files" pages: export as Markdown, import with a preview, undo an import.

The same views serve personal memories (``slug`` None, under /settings/memories/files)
and a project's (under /projects/<slug>/files); project pages answer 404 to
non-members, and viewers may export but not import.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthenticatedHttpRequest
from memories import services
from memories.memory_files import ImportPlan, MemoryFilesTarget, read_uploads, tree_to_zip
from memories.models import EventAction, MemoryEvent
from teams.access import get_project_for_member
from teams.permissions import can_write_project

_URL_NAMES = ("files", "files-export", "files-preview", "files-confirm", "files-undo")


def _get_target(
    request: AuthenticatedHttpRequest, slug: str | None, *, write: bool = False
) -> MemoryFilesTarget:
    if slug is None:
        return MemoryFilesTarget(user=request.user)
    project, _role = get_project_for_member(request, slug, write=write)
    return MemoryFilesTarget(user=request.user, project=project)


def _urls(target: MemoryFilesTarget) -> dict[str, str]:
    """The page's URLs (``files_export``…), for personal (memory-…) or project (project-…) files."""
    if target.project is None:
        urls = {name: reverse(f"memory-{name}") for name in _URL_NAMES}
    else:
        urls = {name: reverse(f"project-{name}", args=[target.project.slug]) for name in _URL_NAMES}
    return {name.replace("-", "_"): url for name, url in urls.items()}


def _can_import(request: AuthenticatedHttpRequest, target: MemoryFilesTarget) -> bool:
    project = target.project
    return project is None or can_write_project(request.user, project)


def _context(
    request: AuthenticatedHttpRequest, target: MemoryFilesTarget, **extra: Any
) -> dict[str, Any]:
    return {
        "target": target,
        "urls": _urls(target),
        "can_import": _can_import(request, target),
        "exportable_count": target.exportable().count(),
        **extra,
    }


def _batch_events(target: MemoryFilesTarget, batch: uuid.UUID) -> list[MemoryEvent]:
    """The events of an import batch, provided they all touch this target's memories."""
    events = list(MemoryEvent.objects.filter(batch=batch).select_related("memory"))
    allowed = set(
        target.memories().filter(pk__in=[e.memory_id for e in events]).values_list("pk", flat=True)
    )
    if not events or any(event.memory_id not in allowed for event in events):
        raise Http404("No such import.")
    return events


def _is_undoable(events: list[MemoryEvent]) -> bool:
    """Whether undoing the batch loses nothing: none of its memories changed after it.

    This also makes a second undo of the same import a refusal rather than a repeat.
    """
    last_id = max(event.pk for event in events)
    return not MemoryEvent.objects.filter(
        memory_id__in={event.memory_id for event in events}, pk__gt=last_id
    ).exists()


def _parse_batch(raw: str | None) -> uuid.UUID | None:
    try:
        return uuid.UUID(raw or "")
    except ValueError:
        return None


@login_required
@require_GET
def files_page(request: AuthenticatedHttpRequest, slug: str | None = None) -> HttpResponse:
    target = _get_target(request, slug)
    result = None
    if batch := _parse_batch(request.GET.get("imported")):
        events = _batch_events(target, batch)
        result = {
            "batch": batch,
            "added": [e.memory for e in events if e.action == EventAction.CREATED],
            "updated": [e.memory for e in events if e.action != EventAction.CREATED],
            "undoable": _is_undoable(events),
        }
    return render(request, "memories/memory_files.html", _context(request, target, result=result))


@login_required
@require_GET
def files_export(request: AuthenticatedHttpRequest, slug: str | None = None) -> HttpResponse:
    target = _get_target(request, slug)
    exported_at = timezone.now()
    response = HttpResponse(tree_to_zip(target.export(exported_at)), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{target.file_name(exported_at)}"'
    return response


def _preview(
    request: AuthenticatedHttpRequest,
    target: MemoryFilesTarget,
    files: dict[str, str],
    plan: ImportPlan,
    *,
    warning: str = "",
) -> HttpResponse:
    context = _context(
        request,
        target,
        plan=plan,
        files_json=json.dumps(files, ensure_ascii=False),
        fingerprint=plan.fingerprint(),
        warning=warning,
    )
    status = 400 if plan.problems else 200
    if request.htmx:
        # htmx swaps only successful responses by default; the problems are the content here.
        return render(request, "memories/partials/import_preview.html", context)
    return render(request, "memories/memory_files.html", context, status=status)


@login_required
@require_POST
def files_preview(request: AuthenticatedHttpRequest, slug: str | None = None) -> HttpResponse:
    target = _get_target(request, slug, write=True)
    uploads = request.FILES.getlist("files")
    if not uploads:
        messages.error(request, _("Choose a zip or one or more .md files to import."))
        return redirect(_urls(target)["files"])
    files, problems = read_uploads(uploads)
    plan = target.plan(files, problems)
    return _preview(request, target, files, plan)


@login_required
@require_POST
def files_confirm(request: AuthenticatedHttpRequest, slug: str | None = None) -> HttpResponse:
    target = _get_target(request, slug, write=True)
    try:
        files = json.loads(request.POST.get("files", ""))
        if not isinstance(files, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in files.items()
        ):
            raise ValueError
    except ValueError:
        messages.error(request, _("The import form was incomplete; upload the files again."))
        return redirect(_urls(target)["files"])
    plan = target.plan(files)
    if not plan.can_apply:
        return _preview(request, target, files, plan)
    if plan.fingerprint() != request.POST.get("fingerprint"):
        warning = _(
            "Memories changed since the preview. Check the new preview, then confirm again."
        )
        return _preview(request, target, files, plan, warning=warning)
    try:
        batch = services.memories_import(
            plan=plan, owner=target.user, project=target.project, actor=target.user
        )
    except services.MemoryConflict:
        plan = target.plan(files)
        warning = _(
            "Memories changed while importing; nothing was written. Check the preview again."
        )
        return _preview(request, target, files, plan, warning=warning)
    return redirect(f"{_urls(target)['files']}?imported={batch}")


@login_required
@require_POST
def files_undo(request: AuthenticatedHttpRequest, slug: str | None = None) -> HttpResponse:
    target = _get_target(request, slug, write=True)
    batch = _parse_batch(request.POST.get("batch"))
    if batch is None:
        raise Http404("No such import.")
    if not _is_undoable(_batch_events(target, batch)):
        messages.error(
            request,
            _(
                "This import cannot be undone: it was undone already, or its memories changed since."
            ),
        )
        return redirect(_urls(target)["files"])
    undone = services.memory_undo_batch(batch=batch, actor=target.user)
    messages.success(
        request,
        _("Import undone: %(count)s memories are as they were before it.") % {"count": len(undone)},
    )
    return redirect(_urls(target)["files"])
