from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from allauth.usersessions.models import UserSession
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts import hooks
from accounts.context_processors import THEME_COOKIE, THEMES
from accounts.forms import TokenForm
from accounts.http import AuthenticatedHttpRequest
from accounts.models import ApiToken, MemorySettings

# The session key under which a new token's secret waits for the page that shows it once.
NEW_SECRET_SESSION_KEY = "new_api_token_secret"


def _token_form(request: AuthenticatedHttpRequest, data: Any = None) -> TokenForm:
    return TokenForm(data, projects=hooks.projects_of(request.user))


def _token_page(request: AuthenticatedHttpRequest, form: TokenForm) -> HttpResponse:
    tokens = ApiToken.objects.filter(user=request.user).select_related("limit_project")
    new_secret = request.session.pop(NEW_SECRET_SESSION_KEY, None)
    return render(
        request,
        "accounts/tokens.html",
        {
            "tokens": tokens,
            "form": form,
            "new_secret": new_secret,
            "server_url": request.build_absolute_uri("/").rstrip("/"),
        },
        status=400 if form.errors else 200,
    )


@login_required
@require_GET
def token_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    return _token_page(request, _token_form(request))


@login_required
@require_POST
def token_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = _token_form(request, request.POST)
    if not form.is_valid():
        return _token_page(request, form)
    _token, secret = ApiToken.issue(
        user=request.user, name=form.cleaned_data["name"], **form.token_options()
    )
    # Shown once by the page this redirects to (a reload there cannot post again); stored hashed.
    request.session[NEW_SECRET_SESSION_KEY] = secret
    return redirect(reverse("token-list") + "#new-token")


@login_required
@require_http_methods(["GET", "POST"])
def token_revoke(request: AuthenticatedHttpRequest, token_id: int) -> HttpResponse:
    """GET asks for confirmation (apps using the token stop working); POST revokes."""
    token = get_object_or_404(ApiToken, pk=token_id, user=request.user)
    if request.method == "GET":
        return render(request, "accounts/token_revoke.html", {"token": token})
    token.revoke()
    messages.success(request, _("Token “%(name)s” revoked.") % {"name": token.name})
    return redirect("token-list")


@require_POST
def theme_set(request: HttpRequest) -> HttpResponse:
    """The header's light / dark / system switch without JavaScript: a cookie, then back."""
    theme = request.POST.get("theme", "system")
    next_url = request.POST.get("next", "/")
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = "/"
    response = redirect(next_url)
    if theme in THEMES:
        response.set_cookie(THEME_COOKIE, theme, max_age=365 * 24 * 3600, samesite="Lax")
    return response


@login_required
@require_POST
def token_pause(request: AuthenticatedHttpRequest, token_id: int) -> HttpResponse:
    """Apps using the token are refused (403 TOKEN_PAUSED) until it is resumed."""
    token = get_object_or_404(ApiToken, pk=token_id, user=request.user, revoked_at__isnull=True)
    token.pause()
    messages.success(request, _("Token “%(name)s” paused.") % {"name": token.name})
    return redirect("token-list")


@login_required
@require_POST
def token_resume(request: AuthenticatedHttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=token_id, user=request.user, revoked_at__isnull=True)
    token.resume()
    messages.success(request, _("Token “%(name)s” resumed.") % {"name": token.name})
    return redirect("token-list")


# The header's privacy switch ----------------------------------------------------------

PAUSE_CHOICES = ("hour", "tomorrow", "off")


def _back(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Back to the page the switch was used on."""
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        target = reverse("memory-list")
    return redirect(target)


def pause_until(choice: str) -> datetime | None:
    """When a pause chosen in the header ends: in an hour, at tomorrow's start (local time),
    or never (None: until turned back on)."""
    now = timezone.localtime()
    if choice == "hour":
        return now + timedelta(hours=1)
    if choice == "tomorrow":
        return (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return None


@login_required
@require_POST
def privacy_pause(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Pause memory: nothing is extracted from chats, nothing injected, until it ends."""
    choice = request.POST.get("for", "")
    if choice not in PAUSE_CHOICES:
        messages.error(request, _("Choose how long to pause memory."))
        return _back(request)
    MemorySettings.for_user(request.user).pause(pause_until(choice))
    messages.success(request, _("Memory paused: nothing is remembered or used meanwhile."))
    return _back(request)


@login_required
@require_POST
def privacy_resume(request: AuthenticatedHttpRequest) -> HttpResponse:
    MemorySettings.for_user(request.user).resume()
    messages.success(request, _("Memory resumed."))
    return _back(request)


@login_required
@require_GET
def account(request: AuthenticatedHttpRequest) -> HttpResponse:
    """My account: email, password and sign-in sessions (allauth's pages), language, theme,
    and the way to erase it all (the My data page)."""
    return render(
        request,
        "accounts/account.html",
        {"session_count": UserSession.objects.filter(user=request.user).count()},
    )
