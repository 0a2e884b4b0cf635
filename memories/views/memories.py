"""/settings/memories: see, search, filter, edit, delete, restore and undo memories.

Every action is a plain form POST that redirects back with a message (and an
undo offer) when JavaScript is off, and with HTMX one answer carrying all it changed
(``_done``): single-row actions swap their row, the state tabs' counts and the summary,
an add the list's first page; ``memories-changed`` then refreshes the "Memory updated"
notice only. Batch actions and undo fire ``memories-reload`` (the list refreshes with the
pages already loaded, so undone memories come back in place).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import Resolver404, resolve, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import push_url, reswap, trigger_client_event

from accounts.http import HTMX_INVALID_INPUT, AuthenticatedHttpRequest
from accounts.models import MemorySettings
from memories import services
from memories.filters import MemoryFilters
from memories.forms import MemoryAddForm, MemoryEditForm, MemorySettingsForm
from memories.gate import NeverRemember
from memories.memory_history import event_changes
from memories.memory_list import (
    MemoryListPage,
    MemoryListSource,
    matching,
    memory_rows,
)
from memories.models import STATE_CONDITIONS, Kind, Memory, Scope
from memories.permissions import (
    batch_undoable_by,
    can_change_memory,
    can_review_memory,
    memories_visible_to,
)
from memories.purge import memories_purge
from search.embeddings import fallback_reason
from teams.access import get_project_for_member
from teams.permissions import projects_readable_with_role, role_may_review, role_may_write

# Access checks ---------------------------------------------------------------


def visible_memory(request: AuthenticatedHttpRequest, memory_id: int) -> Memory:
    """The memory if the user may see it; 404 otherwise, as if it did not exist."""
    return get_object_or_404(memories_visible_to(request.user), pk=memory_id)


def _writable_memory(request: AuthenticatedHttpRequest, memory_id: int) -> Memory:
    """The memory if the user may change it; 403 for a project viewer."""
    memory = visible_memory(request, memory_id)
    if not can_change_memory(request.user, memory):
        raise PermissionDenied
    return memory


def _reviewable_memory(request: AuthenticatedHttpRequest, memory_id: int) -> Memory:
    """The memory if the user may accept or reject it; 403 for one they only see."""
    memory = visible_memory(request, memory_id)
    if not can_review_memory(request.user, memory):
        raise PermissionDenied
    return memory


def _batch_of_user(request: AuthenticatedHttpRequest, raw_batch: str) -> uuid.UUID:
    """A batch the user made themselves, on memories they may still change; 404 otherwise."""
    try:
        batch = uuid.UUID(raw_batch)
    except ValueError:
        raise Http404 from None
    if not batch_undoable_by(request.user, batch):
        raise Http404
    return batch


# Lists: which memories, at which URL ------------------------------------------


def _settings_source(request: AuthenticatedHttpRequest) -> MemoryListSource:
    projects = list(projects_readable_with_role(request.user))
    # The same memories as memories_visible_to, also spelled with literal project ids so that
    # PostgreSQL can combine the owner and project indexes instead of a subplan.
    visible = memories_visible_to(request.user).filter(
        Q(owner=request.user) | Q(project__in=[project.pk for project in projects])
    )
    return MemoryListSource(
        user=request.user,
        visible=visible,
        clearable=visible.exclude(scope=Scope.PROJECT),
        url=reverse("memory-list"),
        projects=projects,
        writable_projects=[p for p in projects if role_may_write(p, p.member_role)],  # type: ignore[attr-defined]
        reviewable_projects=[p for p in projects if role_may_review(p, p.member_role)],  # type: ignore[attr-defined]
    )


def _project_source(request: AuthenticatedHttpRequest, slug: str) -> MemoryListSource:
    """One project's shared memories: 404 for non-members, read-only for viewers."""
    project, role = get_project_for_member(request, slug)
    visible = Memory.objects.of_project(project)
    can_write = role_may_write(project, role)
    return MemoryListSource(
        user=request.user,
        visible=visible,
        clearable=visible,
        url=reverse("project-memories", args=[project.slug]),
        project=project,
        can_write=can_write,
        writable_projects=[project] if can_write else [],
        reviewable_projects=[project] if role_may_review(project, role) else [],
    )


# A list page's URL name → how to build its source from the URL's arguments.
LIST_SOURCES: dict[str, Callable[..., MemoryListSource]] = {
    "memory-list": _settings_source,
    "project-memories": _project_source,
}


def _back_url(request: AuthenticatedHttpRequest) -> str:
    """Where the user was: the form's ``next``, the page HTMX reports, or the settings page."""
    for candidate in (request.POST.get("next"), request.GET.get("next")):
        if candidate and url_has_allowed_host_and_scheme(
            candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        ):
            return candidate
    current = getattr(request, "htmx", None) and request.htmx.current_url_abs_path
    return current or reverse("memory-list")


def _source_and_filters(
    request: AuthenticatedHttpRequest,
) -> tuple[MemoryListSource, MemoryFilters]:
    """The list the user acted from, with its filters as its URL says."""
    url = _back_url(request)
    try:
        match = resolve(urlsplit(url).path)
        build_source = LIST_SOURCES[match.url_name or ""]
    except (Resolver404, KeyError):
        match, build_source = None, _settings_source
    source = build_source(request, **(match.kwargs if match else {}))
    return source, MemoryFilters.from_url(url, source.projects)


# Responses --------------------------------------------------------------------


def _done(
    request: AuthenticatedHttpRequest,
    message: str,
    *,
    memory: Memory | None = None,
    batch: uuid.UUID | None = None,
    gone: int | None = None,
    reload: bool = False,
    first_page: bool = False,
    notice: bool = True,
    extra: dict[str, Any] | None = None,
) -> HttpResponse:
    """Answer an action, or redirect back without htmx.

    One response carries what the action changed, swapped out of band: the row (or its
    empty place, ``gone`` when deleted forever) with the state tabs' counts, the bulk bar's
    and the summary; or the list's first page (``first_page``: an add; or the last row out
    of its tab). Only the "Memory updated" notice reloads itself, when an action may change
    it (``notice``). Batch actions and undo (``reload``) change rows on every page loaded,
    so the list's reloader asks for those pages again."""
    if not request.htmx:
        if batch is not None:
            # The undo offer says it, with its Undo button: one message, not two.
            request.session["memory_undo"] = {"batch": str(batch), "message": message}
        else:
            messages.success(request, message)
        return redirect(_back_url(request))
    context: dict[str, Any] = {
        "toast": message,
        "batch": batch,
        "gone": gone,
        "next": _back_url(request),
        **(extra or {}),
    }
    if reload:
        response = render(request, "memories/partials/_action_response.html", context)
        return trigger_client_event(response, "memories-reload")
    source, filters = _source_and_filters(request)
    listed = MemoryListPage(source=source, filters=filters)
    context |= {"list": listed, "oob_summary": True}
    if memory is not None:
        [row] = memory_rows([memory.pk], source, filters.q)
        context |= {"row": row, "in_tab": row.state == filters.state}
    # The last one out of its tab shows the list's empty state ("The trash is empty.").
    if first_page or not listed.total:
        context |= {"oob_results": True, "row": None, "gone": None}
    else:
        context |= {"oob_tabs": True, "bulk_total": listed.total}
    response = render(request, "memories/partials/_action_response.html", context)
    return trigger_client_event(response, "memories-changed") if notice else response


def _undo_offer(request: AuthenticatedHttpRequest) -> dict[str, str] | None:
    """The last undoable action of a JavaScript-less visit, shown once."""
    return request.session.pop("memory_undo", None)


# The page ------------------------------------------------------------------------

# HTMX asks for one part of the page by the id of the element it swaps.
LIST_PARTS = ("memory-results", "memory-tabs", "memory-summary", "load-more", "extraction-notice")


def _list_page(
    request: AuthenticatedHttpRequest,
    source: MemoryListSource,
    template_name: str,
    page_context: Callable[[], dict[str, Any]],
    status: int = 200,
) -> HttpResponse:
    """A list page, or the part of it HTMX asks for; ``page_context`` builds the rest of the page."""
    filters = MemoryFilters.from_query(request.GET, source.projects)
    context: dict[str, Any] = {
        "list": MemoryListPage(source=source, filters=filters),
        "next": request.get_full_path(),
    }
    htmx = request.htmx
    if htmx and not htmx.history_restore_request and htmx.target in LIST_PARTS:
        # New results bring the sort choices that fit them ("Best match" while searching).
        context["sort_oob"] = htmx.target == "memory-results"
        response = render(request, f"{template_name}#{htmx.target}", context)
        if htmx.target == "memory-results" and htmx.trigger != "memory-reloader":
            # The address bar gets the filters in their short form (no defaults, no page);
            # a reload after an action keeps the address as it is.
            query = filters.querystring(page=1)
            push_url(response, f"{source.url}?{query}" if query else source.url)
        return response
    context |= {"undo_offer": _undo_offer(request), **page_context()}
    return render(request, template_name, context, status=status)


def _add_form(source: MemoryListSource, data: Any = None) -> MemoryAddForm:
    """Personal or any writable project on the settings page; a project's page adds to it."""
    if source.project is not None:
        return MemoryAddForm(data, projects=[source.project], personal=False)
    return MemoryAddForm(data, projects=source.writable_projects)


def _page_context(
    request: AuthenticatedHttpRequest,
    source: MemoryListSource,
    *,
    add_form: MemoryAddForm | None = None,
    known: dict[str, str] | None = None,
) -> dict[str, Any]:
    """What the page shows around the list: the add form, the memory files, the settings."""
    project = source.project
    context: dict[str, Any] = {
        "add_form": add_form or _add_form(source),
        # What the add form was about to duplicate.
        "known": known,
        # Recall runs on the hash embeddings because the model could not be loaded (auto).
        "embedding_fallback": fallback_reason() is not None,
    }
    if project is None:
        memory_settings = MemorySettings.for_user(request.user)
        return context | {
            "memory_settings": memory_settings,
            "settings_form": MemorySettingsForm(instance=memory_settings),
            "files_url": reverse("memory-files"),
            "files_export_url": reverse("memory-files-export"),
        }
    return context | {
        "project": project,
        # The API and the preview refuse a member whose memory is off, projects included.
        "memory_off": not MemorySettings.for_user(request.user).memory_enabled,
        "files_url": reverse("project-files", args=[project.slug]),
        "files_export_url": reverse("project-files-export", args=[project.slug]),
        "activity_url": reverse("project-activity", args=[project.slug]),
    }


def _memories_page(
    request: AuthenticatedHttpRequest,
    source: MemoryListSource,
    *,
    add_form: MemoryAddForm | None = None,
    known: dict[str, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    return _list_page(
        request,
        source,
        "memories/memory_list.html",
        lambda: _page_context(request, source, add_form=add_form, known=known),
        status=status,
    )


@login_required
@require_GET
def memory_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _memories_page(request, _settings_source(request))


@login_required
@require_GET
def project_memory_list(request: AuthenticatedHttpRequest, slug: str) -> HttpResponse:
    return _memories_page(request, _project_source(request, slug))


def _writable_source(request: AuthenticatedHttpRequest) -> tuple[MemoryListSource, MemoryFilters]:
    """The list acted from, when the user may write there (403 for a project's viewers)."""
    source, filters = _source_and_filters(request)
    if not source.can_write:
        raise PermissionDenied
    return source, filters


@login_required
@require_POST
def memory_add(request: AuthenticatedHttpRequest) -> HttpResponse:
    source, _filters = _writable_source(request)
    form = _add_form(source, request.POST)
    if not form.is_valid():
        if request.htmx:
            return render(
                request,
                "memories/partials/_memory_add_form.html",
                {"add_form": form, "next": _back_url(request)},
                status=HTMX_INVALID_INPUT,
            )
        return _memories_page(request, source, add_form=form, status=400)
    project = form.project
    try:
        memory, created = services.memory_remember(
            owner=request.user,
            content=form.cleaned_data["content"],
            kind=form.cleaned_data["kind"],
            scope=Scope.PROJECT if project else Scope.USER,
            project=project,
            actor=request.user,
        )
    except NeverRemember as refusal:
        form.add_error(
            "content",
            _("Not remembered: your memory settings say never to remember “%(rule)s”.")
            % {"rule": refusal.rule},
        )
        if request.htmx:
            return render(
                request,
                "memories/partials/_memory_add_form.html",
                {"add_form": form, "next": _back_url(request)},
                status=400,
            )
        return _memories_page(request, source, add_form=form, status=400)
    if not created:
        return _already_known(request, source, form, memory)
    return _done(
        request,
        _("Memory added."),
        first_page=True,
        notice=False,
        extra={"add_form": _add_form(source)},
    )


def _already_known(
    request: AuthenticatedHttpRequest,
    source: MemoryListSource,
    form: MemoryAddForm,
    memory: Memory,
) -> HttpResponse:
    """The add form again, saying the memory exists already and linking to it."""
    known = {"content": memory.content, "url": memory.page_url(source.url)}
    if request.htmx:
        # The form says it; an earlier "Memory added." toast would contradict it.
        return render(
            request,
            "memories/partials/_action_response.html",
            {"add_form": form, "known": known, "next": _back_url(request), "clear_toasts": True},
        )
    return _memories_page(request, source, add_form=form, known=known)


def _edit_form(memory: Memory, data: Any = None) -> MemoryEditForm:
    auto_id = f"memory-{memory.pk}-%s"
    if data is None:
        return MemoryEditForm.for_memory(memory, auto_id=auto_id)
    return MemoryEditForm(data, auto_id=auto_id)


def _edit_refused(
    request: AuthenticatedHttpRequest,
    memory: Memory,
    form: MemoryEditForm,
    status: int,
    conflict: Memory | None = None,
) -> HttpResponse:
    """The edit form again, with its errors or the conflicting current version."""
    context: dict[str, Any] = {"edit_form": form, "conflict": conflict}
    if request.htmx:
        source, filters = _source_and_filters(request)
        [row] = memory_rows([memory.pk], source, filters.q)
        context |= {"memory": memory, "row": row, "next": _back_url(request)}
        return render(
            request,
            "memories/partials/_memory_row.html",
            context,
            status=HTMX_INVALID_INPUT if status == 400 else status,
        )
    return memory_panel(
        request, memory, "memories/partials/_memory_edit_form.html", context, status
    )


@login_required
@require_http_methods(["GET", "POST"])
def memory_edit(request: AuthenticatedHttpRequest, memory_id: int) -> HttpResponse:
    memory = _writable_memory(request, memory_id)
    if request.method == "GET":
        return memory_panel(
            request,
            memory,
            "memories/partials/_memory_edit_form.html",
            {"edit_form": _edit_form(memory), "in_list": bool(request.htmx)},
        )
    form = _edit_form(memory, request.POST)
    if not form.is_valid():
        return _edit_refused(request, memory, form, status=400)
    try:
        memory = services.memory_update(
            memory=memory,
            changes=form.changes(),
            expected_revision=form.cleaned_data["revision"],
            actor=request.user,
        )
    except services.MemoryConflict as conflict:
        # Keep what the user wrote, show what is there now, and let a second save win on purpose.
        data = request.POST.copy()
        data["revision"] = str(conflict.current.revision)
        return _edit_refused(request, memory, _edit_form(memory, data), 409, conflict.current)
    return _done(request, _("Memory saved."), memory=memory)


@login_required
@require_POST
def memory_delete(request: AuthenticatedHttpRequest, memory_id: int) -> HttpResponse:
    memory = _writable_memory(request, memory_id)
    batch = services.memories_delete(memories=[memory], actor=request.user)
    return _done(request, _("Memory deleted."), memory=memory, batch=batch)


def _trashed_memory(request: AuthenticatedHttpRequest, memory_id: int) -> Memory:
    """A memory in the trash that the user may change; 404 for one not in the trash."""
    memory = _writable_memory(request, memory_id)
    if memory.deleted_at is None:
        raise Http404
    return memory


@login_required
@require_http_methods(["GET", "POST"])
def memory_purge(request: AuthenticatedHttpRequest, memory_id: int) -> HttpResponse:
    """Delete forever a memory in the trash, after a confirmation (its own panel or page)."""
    memory = _trashed_memory(request, memory_id)
    if request.method == "POST" and request.POST.get("confirm") == "forever":
        memories_purge(memories=[memory])
        return _done(request, _("Memory deleted forever."), gone=memory_id)
    return memory_panel(request, memory, "memories/partials/_memory_purge.html", {})


@login_required
@require_http_methods(["GET", "POST"])
def memory_empty_trash(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Delete forever everything in the trash of the list acted from, after a confirmation
    that names how many (a number changed meanwhile asks again)."""
    source, _filters = _writable_source(request)
    trashed = source.clearable.in_trash().filter(pk__in=source.writable.values("pk"))
    count = trashed.count()
    if request.method == "POST" and request.POST.get("count") == str(count) and count:
        memories_purge(memories=trashed.only("pk"))
        message = ngettext(
            "%(count)d memory deleted forever.", "%(count)d memories deleted forever.", count
        ) % {"count": count}
        return _done(request, message, reload=True)
    return memory_panel(
        request,
        None,
        "memories/partials/_memory_empty_trash.html",
        {"count": count, "changed": request.method == "POST", "project": source.project},
        status=409 if request.method == "POST" else 200,
    )


@login_required
@require_POST
def memory_restore(request: AuthenticatedHttpRequest, memory_id: int) -> HttpResponse:
    memory = services.memory_restore(
        memory=_writable_memory(request, memory_id), actor=request.user
    )
    return _done(request, _("Memory restored."), memory=memory)


@login_required
@require_POST
def memory_pin(request: AuthenticatedHttpRequest, memory_id: int) -> HttpResponse:
    pinned = request.POST.get("pinned") == "1"
    memory = services.memory_set_pinned(
        memory=_writable_memory(request, memory_id), pinned=pinned, actor=request.user
    )
    return _done(request, _("Pinned.") if pinned else _("Unpinned."), memory=memory)


@login_required
@require_POST
def memory_review(request: AuthenticatedHttpRequest, memory_id: int) -> HttpResponse:
    memory = _reviewable_memory(request, memory_id)
    if request.POST.get("decision") == "accept":
        memory = services.memory_review_accept(memory=memory, actor=request.user)
        return _done(request, _("Memory accepted."), memory=memory)
    memory = services.memory_reject(memory=memory, actor=request.user)
    return _done(request, _("Memory rejected."), memory=memory)


@login_required
@require_POST
def memory_undo(request: AuthenticatedHttpRequest) -> HttpResponse:
    batch = _batch_of_user(request, request.POST.get("batch", ""))
    count = len(services.memory_undo_batch(batch=batch, actor=request.user))
    message = ngettext(
        "Undone: %(count)d memory is back as it was.",
        "Undone: %(count)d memories are back as they were.",
        count,
    ) % {"count": count}
    return _done(request, message, reload=True)


def memory_panel(
    request: AuthenticatedHttpRequest,
    memory: Memory | None,
    partial: str,
    context: dict[str, Any],
    status: int = 200,
) -> HttpResponse:
    """Edit, history, evidence, clear all: a panel in the list with HTMX, a page without."""
    context = {"memory": memory, "partial": partial, "next": _back_url(request), **context}
    if request.htmx:
        return render(request, partial, context, status=status)
    return render(request, "memories/memory_panel_page.html", context, status=status)


@login_required
@require_GET
def memory_history(request: AuthenticatedHttpRequest, memory_id: int) -> HttpResponse:
    memory = visible_memory(request, memory_id)
    events = memory.events.select_related("actor")
    return memory_panel(
        request,
        memory,
        "memories/partials/_memory_history.html",
        {"events": [(event, event_changes(event)) for event in events]},
    )


BULK_ACTIONS = ("delete", "restore")


@login_required
@require_POST
def memory_bulk(request: AuthenticatedHttpRequest) -> HttpResponse:
    source, filters = _writable_source(request)
    action = request.POST.get("action", "")
    kind = action.removeprefix("kind:")
    if action not in BULK_ACTIONS and kind not in Kind.values:
        return _refuse(request, _("Choose what to do with the selected memories."))
    if request.POST.get("all_matching"):
        selected = matching(filters, source.visible)
    else:
        ids = [int(pk) for pk in request.POST.getlist("ids") if pk.isdigit()]
        selected = source.visible.filter(pk__in=ids)
    if not selected.exists():
        return _refuse(request, _("Select at least one memory first."))
    if selected.exclude(pk__in=source.writable.values("pk")).exists():
        raise PermissionDenied
    memories = list(selected)
    count = len(memories)
    if action == "delete":
        batch = services.memories_delete(memories=memories, actor=request.user)
        message = _trashed_message(count)
    elif action == "restore":
        batch = services.memories_restore(memories=memories, actor=request.user)
        message = ngettext("%(count)d memory restored.", "%(count)d memories restored.", count) % {
            "count": count
        }
    else:
        batch = services.memories_change_kind(memories=memories, kind=kind, actor=request.user)
        message = ngettext(
            "%(count)d memory changed kind.", "%(count)d memories changed kind.", count
        ) % {"count": count}
    return _done(request, message, batch=batch, reload=True)


def _trashed_message(count: int) -> str:
    return ngettext(
        "%(count)d memory moved to the trash.", "%(count)d memories moved to the trash.", count
    ) % {"count": count}


def _refuse(request: AuthenticatedHttpRequest, message: str) -> HttpResponse:
    """Bad input to an action: say so, change nothing."""
    if not request.htmx:
        messages.error(request, message)
        return redirect(_back_url(request))
    response = render(
        request,
        "memories/partials/_action_response.html",
        {"toast": message},
        status=HTMX_INVALID_INPUT,
    )
    # Only the toast, out of band: whatever the form targets stays as it is.
    return reswap(response, "none")


@login_required
@require_http_methods(["GET", "POST"])
def memory_clear(request: AuthenticatedHttpRequest) -> HttpResponse:
    source, _filters = _writable_source(request)
    clearable = source.clearable.exclude(STATE_CONDITIONS["trash"]).filter(
        pk__in=source.writable.values("pk")
    )
    count = clearable.count()
    if request.method == "POST" and request.POST.get("count") == str(count) and count:
        batch = services.memories_delete(memories=clearable, actor=request.user)
        return _done(request, _trashed_message(count), batch=batch, reload=True)
    return memory_panel(
        request,
        None,
        "memories/partials/_memory_clear.html",
        {"count": count, "changed": request.method == "POST", "project": source.project},
        status=409 if request.method == "POST" else 200,
    )


@login_required
@require_POST
def memory_settings(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = MemorySettingsForm(request.POST, instance=MemorySettings.for_user(request.user))
    if form.is_valid():  # Unticked boxes are False: nothing here can be invalid.
        form.save()
    message = _("Memory settings saved.")
    if not request.htmx:
        messages.success(request, message)
        return redirect(_back_url(request))
    return render(
        request,
        "memories/partials/_memory_settings_response.html",
        {"settings_form": form, "memory_settings": form.instance, "toast": message},
    )
