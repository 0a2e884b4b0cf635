from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts.forms import TokenForm
from accounts.http import AuthenticatedHttpRequest
from accounts.models import ApiToken


def _token_page(
    request: AuthenticatedHttpRequest, form: TokenForm, new_secret: str | None = None
) -> HttpResponse:
    tokens = ApiToken.objects.filter(user=request.user)
    return render(
        request,
        "accounts/tokens.html",
        {"tokens": tokens, "form": form, "new_secret": new_secret},
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
    # The secret is rendered in this response only; it is stored hashed.
    return _token_page(request, TokenForm(), new_secret=secret)


@login_required
@require_POST
def token_revoke(request: AuthenticatedHttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=token_id, user=request.user)
    token.revoke()
    messages.success(request, _("Token “%(name)s” revoked.") % {"name": token.name})
    return redirect("token-list")
