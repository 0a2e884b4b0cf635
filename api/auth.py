from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja.security import HttpBearer, SessionAuth

from accounts.models import ApiToken


class BearerToken(HttpBearer):
    """A personal API token; sets ``request.api_token`` for access logs."""

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        api_token = ApiToken.authenticate(token)
        if api_token is None:
            return None
        request.user = api_token.user
        request.api_token = api_token  # type: ignore[attr-defined]
        return api_token.user


class BrowserSession(SessionAuth):
    """A signed-in browser (CSRF-checked for writes)."""

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        user = super().authenticate(request, key)
        if user is not None:
            request.api_token = None  # type: ignore[attr-defined]
        return user


class ApiRequest(HttpRequest):
    """A request that passed the API's authentication."""

    user: User
    api_token: ApiToken | None
