from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.context_processors import THEME_COOKIE, THEMES
from accounts.forms import TokenForm
from accounts.http import AuthenticatedHttpRequest
from accounts.models import ApiToken

# The session key under which a new token's secret waits for the page that shows it once.
NEW_SECRET_SESSION_KEY = "new_api_token_secret"


def _token_page(request: AuthenticatedHttpRequest, form: TokenForm) -> HttpResponse:
    tokens = ApiToken.objects.filter(user=request.user)
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
    return _token_page(request, TokenForm())


@login_required
@require_POST
def token_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = TokenForm(request.POST)
    if not form.is_valid():
        return _token_page(request, form)
    _token, secret = ApiToken.issue(user=request.user, name=form.cleaned_data["name"])
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
