"""The access page (/settings/access): which app received which memories, when, for what."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.http import AuthenticatedHttpRequest
from recall.access import access_rows, apps_of, entries
from recall.forms import AccessFilterForm

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
