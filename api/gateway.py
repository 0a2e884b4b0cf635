"""What the ASGI endpoints beside Django (/mcp, /v1/) share: token auth, ORM calls in a
thread, and an API request for calling the JSON API's own endpoint functions.

The MCP server and the OpenAI-compatible proxy are plain ASGI apps, so they do what
Django's handler does around a request themselves: the ORM runs in a worker thread,
with old connections closed before and after as at the start and end of a request.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from django.http import HttpResponse

from accounts.models import ApiToken
from api.auth import PAUSED_MESSAGE, ApiRequest

P = ParamSpec("P")
T = TypeVar("T")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UNAUTHORIZED_MESSAGE = "Send a valid API token as 'Authorization: Bearer <token>'."

# Where the token that passed authentication waits in the ASGI scope for the app.
TOKEN_KEY = "memoryapp.api_token"


def _in_request(work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    close_old_connections()
    try:
        return work(*args, **kwargs)
    finally:
        close_old_connections()


async def run_sync(work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run ``work`` (ORM code) in a worker thread, as Django runs a sync view."""
    return await sync_to_async(_in_request, thread_sensitive=False)(work, *args, **kwargs)


def bearer_secret(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization":
            kind, _, secret = value.decode("latin-1").partition(" ")
            if kind.lower() == "bearer" and secret.strip():
                return secret.strip()
    return None


def header(scope: Scope, wanted: str) -> str:
    wanted_bytes = wanted.lower().encode("latin-1")
    for name, value in scope.get("headers", []):
        if name.lower() == wanted_bytes:
            return str(value.decode("latin-1"))
    return ""


async def send_json(
    send: Send, status: int, body: Any, headers: dict[str, str] | None = None
) -> None:
    payload = json.dumps(body).encode()
    raw_headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        *((k.lower().encode(), v.encode()) for k, v in (headers or {}).items()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": payload})


class TokenAuth:
    """ASGI middleware: a personal API token as ``Authorization: Bearer <token>``, or 401
    (403 for a paused token, as in the JSON API: ``api.auth``).

    ``error(code, message)`` is the body of a refusal in the wrapped app's own error shape.
    """

    def __init__(self, app: ASGIApp, error: Callable[[str, str], dict[str, Any]]):
        self.app = app
        self.error = error

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        secret = bearer_secret(scope)
        token = await run_sync(ApiToken.authenticate, secret) if secret else None
        if token is None:
            body = self.error("UNAUTHORIZED", UNAUTHORIZED_MESSAGE)
            await send_json(send, 401, body, {"WWW-Authenticate": "Bearer"})
            return
        if token.is_paused:
            await send_json(send, 403, self.error("TOKEN_PAUSED", PAUSED_MESSAGE))
            return
        scope[TOKEN_KEY] = token
        await self.app(scope, receive, send)


class TokenEndpoint:
    """An ASGI endpoint beside Django (/mcp, /v1/): ``app`` behind ``TokenAuth``."""

    def __init__(self, app: ASGIApp, error: Callable[[str, str], dict[str, Any]]):
        self.app = TokenAuth(app, error)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def scope_token(scope: Scope) -> ApiToken:
    token = scope.get(TOKEN_KEY)
    if not isinstance(token, ApiToken):
        raise RuntimeError("TokenAuth did not run for this request")
    return token


async def as_caller(scope: Scope, work: Callable[[ApiRequest], T]) -> T:
    """Run ``work`` (calls of the JSON API's endpoint functions) in a worker thread, with
    the API request of the token that passed ``TokenAuth``, in the caller's language."""
    request = api_request(scope_token(scope), accept_language=header(scope, "accept-language"))
    # Links in the answers (slash commands' replies) name the server as the caller reached it.
    if host := header(scope, "host"):
        request.META["HTTP_HOST"] = host
        request.META["wsgi.url_scheme"] = scope.get("scheme", "http")
    return await run_sync(work, request)


def api_request(token: ApiToken, *, accept_language: str = "") -> ApiRequest:
    """A request as the JSON API's endpoint functions see it after token auth."""
    request = ApiRequest()
    request.method = "POST"
    request.user = token.user
    request.api_token = token
    if accept_language:
        request.META["HTTP_ACCEPT_LANGUAGE"] = accept_language
    return request


def scratch_response() -> HttpResponse:
    """The response an endpoint function may set headers on; nobody reads it."""
    return HttpResponse()
