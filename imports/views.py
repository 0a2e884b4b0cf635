"""The import section of /settings/data: upload, preview and choices, progress, result, Undo.

Each import is a card (``imports/partials/_import.html``) that htmx polls while a worker
works on it; every action answers htmx with the card (or the section) and a plain form
post with a redirect back to /settings/data, so the page works without JavaScript too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import reswap, retarget

from accounts.http import AuthenticatedHttpRequest
from imports import analysis, errors, services
from imports.analysis import language_name
from imports.errors import ImportNotAllowed, ImportRefused
from imports.forms import ChoicesForm, ImportForm
from imports.models import ACTIVE_STATUSES, Import, ImportStatus, Phase
from memories.models import Kind

# Imports listed on the page, newest first.
LISTED = 5


@dataclass(frozen=True)
class Bar:
    """One progress bar: what it counts, how far it is."""

    label: str
    done: int
    total: int
    # Shown as "done / total" (things), else as a percentage (bytes).
    counts: bool = True

    @property
    def percent(self) -> int:
        return 100 if self.total <= 0 else min(100, round(100 * self.done / self.total))


def _bars(job: Import) -> list[Bar]:
    labels = {
        "read": _("Read"),
        "stored": _("Stored"),
        "extracted": _("Memories built"),
        "indexed": _("Indexed for search"),
        "added": _("Added"),
    }
    return [
        Bar(str(labels[part]), done, total, counts=part != "read")
        for part, (done, total) in job.progress().items()
    ]


def _memories(job: Import) -> list[dict[str, str]]:
    """The saved memories the preview lists, with what adding each would do."""
    labels = {
        analysis.NEW: _("new"),
        analysis.KNOWN: _("known already"),
        analysis.REPEATED: _("repeated above"),
        analysis.REFUSED: _("only a secret: not stored"),
        analysis.TOO_LONG: _("too long"),
    }
    return [
        {
            "content": item["content"],
            "status": item["status"],
            "label": str(labels.get(item["status"], item["status"])),
            "kind": str(Kind(item["kind"]).label) if item.get("kind") in Kind.values else "",
        }
        for item in job.preview.get("items", [])
    ]


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def card(job: Import) -> dict[str, Any]:
    """What the import's card shows."""
    preview = job.preview
    return {
        "item": job,
        "active": job.status in ACTIVE_STATUSES,
        "bars": _bars(job) if job.status in (*ACTIVE_STATUSES, ImportStatus.FAILED) else [],
        "phase": Phase(job.phase).label if job.phase else "",
        "error": errors.message(job.source, job.error_code, job.error_details)
        if job.error_code
        else "",
        "first_at": _when(preview.get("first_at")),
        "last_at": _when(preview.get("last_at")),
        "languages": [
            (language_name(code), count) for code, count in preview.get("languages", []) if code
        ],
        "memory_unavailable": errors.refusal(reason)
        if job.imports_conversations and (reason := services.memory_unavailable(job.owner))
        else "",
        "memories": _memories(job) if job.status == ImportStatus.READY else [],
        "can_undo": services.can_undo(job),
        "can_discard": services.can_discard(job),
    }


def section_context(
    request: AuthenticatedHttpRequest, form: ImportForm | None = None
) -> dict[str, Any]:
    """The import section's context (the form and the latest imports), for /settings/data."""
    imports = list(Import.objects.of(request.user).select_related("owner")[:LISTED])
    return {
        "import_form": form or ImportForm(),
        "import_cards": [card(job) for job in imports],
        "import_busy": any(job.status in ACTIVE_STATUSES for job in imports),
        "import_max_bytes": settings.IMPORT_MAX_BYTES,
    }


def _own(request: AuthenticatedHttpRequest, import_id: int) -> Import:
    return get_object_or_404(Import.objects.of(request.user).select_related("owner"), pk=import_id)


def _back(job: Import | None = None) -> HttpResponse:
    anchor = f"#import-{job.pk}" if job is not None else "#imports"
    return redirect(reverse("my-data") + anchor)


def _answer(
    request: AuthenticatedHttpRequest, job: Import | None, problem: str = ""
) -> HttpResponse:
    """After an action: the section again for htmx (``problem`` said on the import's card);
    a plain post goes back to the page (``problem`` said at its top)."""
    if request.htmx:
        context = {**section_context(request), "problem": problem, "problem_import": job}
        return render(request, "imports/partials/_imports.html", context)
    if problem:
        messages.error(request, problem)
    return _back(job)


@login_required
@require_http_methods(["GET", "POST"])
def import_page(request: AuthenticatedHttpRequest) -> HttpResponse:
    """GET: the import section alone. POST: a new import (a plain post with a mistake
    lands on this page, with the form as it was sent)."""
    if request.method != "POST":
        return render(request, "imports/import_page.html", section_context(request))
    form = ImportForm(request.POST, request.FILES)
    job = None
    if form.is_valid():
        source = form.cleaned_data["source"]
        try:
            job = services.create_import(
                owner=request.user,
                source=source,
                upload=form.cleaned_data["file"],
                text=form.cleaned_data["text"],
            )
        except ImportNotAllowed as refused:
            form.add_error(None, errors.refusal(refused.code))
        except ImportRefused as refused:
            form.add_error("file", errors.message(source, refused.code, refused.details))
    if request.htmx:
        return render(
            request,
            "imports/partials/_imports.html",
            section_context(request, None if job else form),
        )
    if job is None:
        context = section_context(request, form)
        return render(request, "imports/import_page.html", context, status=400)
    return _back(job)


@login_required
@require_GET
def import_detail(request: AuthenticatedHttpRequest, import_id: int) -> HttpResponse:
    """The card, polled while a worker works on the import; once it is done, the whole
    section (whose upload form comes back)."""
    job = _own(request, import_id)
    if not request.htmx:
        return _back(job)
    if job.status in ACTIVE_STATUSES:
        return render(request, "imports/partials/_import.html", {"card": card(job)})
    response = render(request, "imports/partials/_imports.html", section_context(request))
    return retarget(reswap(response, "outerHTML"), "#imports")


def _act(request: AuthenticatedHttpRequest, import_id: int, action: Any) -> HttpResponse:
    job = _own(request, import_id)
    try:
        action(job)
    except ImportNotAllowed as refused:
        return _answer(request, job, errors.refusal(refused.code))
    return _answer(request, job)


@login_required
@require_POST
def import_start(request: AuthenticatedHttpRequest, import_id: int) -> HttpResponse:
    choices = ChoicesForm(request.POST)
    choices.is_valid()
    return _act(
        request,
        import_id,
        lambda job: services.start_import(
            job,
            keep_conversations=choices.cleaned_data.get("keep_conversations", False),
            build_memories=choices.cleaned_data.get("build_memories", False),
        ),
    )


@login_required
@require_POST
def import_undo(request: AuthenticatedHttpRequest, import_id: int) -> HttpResponse:
    return _act(request, import_id, services.undo_import)


@login_required
@require_POST
def import_resume(request: AuthenticatedHttpRequest, import_id: int) -> HttpResponse:
    return _act(request, import_id, services.resume_import)


@login_required
@require_POST
def import_discard(request: AuthenticatedHttpRequest, import_id: int) -> HttpResponse:
    return _act(request, import_id, services.discard_import)
