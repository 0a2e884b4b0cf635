from __future__ import annotations

import json
import sys

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views import defaults
from django.views.decorators.http import require_GET, require_POST

from accounts.http import AuthenticatedHttpRequest
from api.errors import database_unavailable, error_response
from config import my_data as my_data_services
from imports.views import section_context
from teams import services as team_services


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("memory-list")
    return render(request, "home.html")


def server_error(request: HttpRequest) -> HttpResponse:
    """An unhandled error's page (handler500): when the database is unreachable, a 503 with
    Retry-After, as the API answers (an error anywhere, even in a middleware reading the
    session, lands here); any other error, Django's 500 page."""
    exc = sys.exc_info()[1]
    unavailable = database_unavailable(exc) if exc is not None else None
    if unavailable is not None:
        # Rendered without the request: its context (the user, the session) needs the database.
        response = HttpResponse(render_to_string("503.html"), status=503)
        response["Retry-After"] = str(unavailable[1])
        return response
    return defaults.server_error(request)


def api_not_found(request: HttpRequest) -> HttpResponse:
    return error_response("NOT_FOUND", f"No API endpoint at {request.path}.")


# My data: the archive of everything of mine, and erasing my account (config.my_data) ----


@login_required
@require_GET
def my_data(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _my_data_page(request)


def _my_data_page(
    request: AuthenticatedHttpRequest, *, erase_error: str = "", status: int = 200
) -> HttpResponse:
    return render(
        request,
        "accounts/my_data.html",
        {
            **section_context(request),
            "succession": team_services.succession_plan(request.user),
            "erase_error": erase_error,
            "retention_days": settings.MEMORY_MESSAGE_RETENTION_DAYS,
            "trash_days": settings.MEMORY_TRASH_DAYS,
        },
        status=status,
    )


@login_required
@require_GET
def my_data_export(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Everything of mine as one JSON file, downloaded."""
    archive = my_data_services.archive_of(request.user)
    response = HttpResponse(
        json.dumps(archive, ensure_ascii=False, indent=2, cls=DjangoJSONEncoder),
        content_type="application/json; charset=utf-8",
    )
    filename = f"memoryapp-{request.user.get_username()}-{timezone.now():%Y-%m-%d}.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
@require_POST
def my_data_erase(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Erase my account and everything of mine, once my email is typed to confirm."""
    typed = request.POST.get("email", "").strip()
    if not typed or typed.casefold() != request.user.email.casefold():
        return _my_data_page(
            request,
            erase_error=_("Type your email address exactly as shown to confirm."),
            status=400,
        )
    user = request.user
    logout(request)
    my_data_services.erase_account(user)
    messages.success(request, _("Your account and all its data were erased."))
    return redirect("home")
