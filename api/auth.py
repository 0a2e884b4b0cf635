"""Who is calling the API, and what their token allows.

Every check of a token happens here: ``BearerToken`` (and ``gateway.TokenAuth`` for /mcp
and /v1/, which use ``token_refusal``) refuses an unknown, revoked or expired token (401)
and a paused one (403 TOKEN_PAUSED); ``requires_scope`` declares, on each endpoint
function, the scope its operation needs (403 FORBIDDEN without it); ``writable_project``
and ``conversation_in_limit`` apply a token's limit (to personal memories or one project)
with the user's role, for memories and conversations alike. The MCP tools and
the proxy call those same endpoint functions, so one declaration covers all three.
A refused call changes nothing: the checks run before the endpoint's body.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from django.contrib.auth.models import User
from django.db.models import Q
from django.http import HttpRequest
from ninja.security import HttpBearer, SessionAuth

from accounts.models import ApiToken, TokenScope
from api.errors import ApiError
from conversations.models import Conversation
from memories.models import Scope
from memories.permissions import token_limit_covers
from teams.models import Project
from teams.permissions import can_write_project, projects_readable_by

P = ParamSpec("P")
T = TypeVar("T")

PAUSED_MESSAGE = "This token is paused; resume it at /settings/tokens/."


class BearerToken(HttpBearer):
    """A personal API token; sets ``request.api_token`` for access logs."""

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        api_token = ApiToken.authenticate(token)
        if api_token is None:
            return None
        if api_token.is_paused:
            raise ApiError("TOKEN_PAUSED", PAUSED_MESSAGE)
        request.user = api_token.user
        request.api_token = api_token  # type: ignore[attr-defined]
        return api_token.user


class BrowserSession(SessionAuth):
    """A signed-in browser (CSRF-checked for writes)."""

    def _get_key(self, request: HttpRequest) -> str | None:
        # Only a signed-in session is CSRF-checked: a call with a bad token, or none, and no
        # session is unauthenticated (401 UNAUTHORIZED), not a forged browser request (403).
        if not request.user.is_authenticated:
            return None
        return super()._get_key(request)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        user = super().authenticate(request, key)
        if user is not None:
            request.api_token = None  # type: ignore[attr-defined]
        return user


class ApiRequest(HttpRequest):
    """A request that passed the API's authentication."""

    user: User
    api_token: ApiToken | None

    def _get_scheme(self) -> str:
        # The gateway's requests (MCP, the proxy) carry their ASGI scope's scheme here.
        return str(self.META.get("wsgi.url_scheme", "http"))


def scope_refusal(token: ApiToken | None, scope: str) -> ApiError | None:
    """Why ``token`` may not do an operation needing ``scope`` (None: it may). A browser
    session (no token) may do everything its user may."""
    if token is None:
        return None
    if token.is_paused:
        return ApiError("TOKEN_PAUSED", PAUSED_MESSAGE)
    if not token.allows(scope):
        return ApiError(
            "FORBIDDEN",
            f"This token lacks the '{scope}' scope; choose its scopes at /settings/tokens/.",
            {"scope": scope},
        )
    return None


def requires_scope(scope: TokenScope) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Declare the scope an endpoint function needs; checked before it runs, whoever calls
    it (the JSON API, an MCP tool, the proxy). Its first argument is the request."""

    def decorate(endpoint: Callable[P, T]) -> Callable[P, T]:
        @functools.wraps(endpoint)
        def checked(*args: P.args, **kwargs: P.kwargs) -> T:
            request = args[0] if args else kwargs["request"]
            refusal = scope_refusal(getattr(request, "api_token", None), scope)
            if refusal is not None:
                raise refusal
            return endpoint(*args, **kwargs)

        checked.token_scope = scope  # type: ignore[attr-defined]
        # The endpoint's annotations resolved where it was written (ninja reads them).
        checked.__signature__ = inspect.signature(endpoint, eval_str=True)  # type: ignore[attr-defined]
        return checked

    return decorate


def token_allows(request: HttpRequest, scope: TokenScope) -> bool:
    return scope_refusal(getattr(request, "api_token", None), scope) is None


def member_project(request: ApiRequest, ref: int | str) -> Project:
    """A project of the caller's teams, by id or slug; 404 for any other."""
    projects = projects_readable_by(request.user)
    lookup = Q(pk=int(ref)) if str(ref).isdigit() else Q(slug=str(ref))
    project = projects.filter(lookup).first()
    if project is None:
        raise ApiError("NOT_FOUND", f"No project {ref}.")
    return project


def writable_project(request: ApiRequest, ref: int | str, *, things: str) -> Project:
    """A project of the caller's teams that its token's limit covers and its user may add
    ``things`` (memories, conversations) to; 404 for another's, 403 otherwise."""
    project = member_project(request, ref)
    if not token_limit_covers(request.api_token, Scope.PROJECT, project.pk):
        raise ApiError("FORBIDDEN", f"This token may not add {things} to this project (its limit).")
    if not can_write_project(request.user, project):
        raise ApiError(
            "FORBIDDEN",
            f"Viewers cannot add {things} to this project, nor anyone to an archived one.",
        )
    return project


def conversation_in_limit(request: ApiRequest, conversation: Conversation) -> bool:
    """Whether the caller's token's limit covers ``conversation``: a project's conversation
    makes that project's memories, any other the user's personal ones."""
    scope = Scope.PROJECT if conversation.project_id is not None else Scope.USER
    return token_limit_covers(request.api_token, scope, conversation.project_id)
