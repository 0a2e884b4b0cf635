"""The access page (/settings/access): which app received which memories, when, for what;
and "What would my assistant recall?" (/settings/memories/recall), a dry-run preview."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.http import AuthenticatedHttpRequest
from recall.access import access_rows, apps_of, entries
from recall.explain import explain_recall
from recall.forms import AccessFilterForm, RecallPreviewForm

PER_PAGE = 25


@login_required
@require_GET
def access_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    apps = apps_of(request.user)
    if request.GET.get("app") and request.GET["app"] not in dict(apps):
        # Another user's token, or none: not shown as "everything".
        raise Http404
    form = AccessFilterForm(request.GET or None, apps=apps)
    filters = form.cleaned_data if form.is_valid() else {}
    rows = access_rows(
        request.user,
        app=filters.get("app") or "",
        since=filters.get("since"),
        until=filters.get("until"),
    )
    page = Paginator(rows, PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "recall/access.html",
        {
            "form": form,
            "page": page,
            "entries": entries(request.user, list(page.object_list)),
            "filter_query": query.urlencode(),
        },
    )


@login_required
@require_GET
def recall_preview(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The block a message would bring, why, and what was left out: a panel of the memories
    page with htmx, a page of its own without. Nothing is logged or counted (a dry run)."""
    form = RecallPreviewForm(request.GET)
    explained = (
        explain_recall(request.user, form.cleaned_data["message"]) if form.is_valid() else None
    )
    context = {"recall_form": form, "explained": explained}
    if request.htmx:
        return render(request, "recall/partials/_recall_preview.html", context)
    return render(request, "recall/recall_preview.html", context)
