"""The OpenAI-compatible memory proxy: POST /v1/chat/completions and GET /v1/models.

Point any OpenAI-compatible app (Open WebUI, the ``openai`` SDK, …) at
``<server>/v1`` with a memoryapp API token as its key. For each chat request:

1. The last user message (and up to 3 messages before it) asks the injection preview
   (api/recall.py) for the memory block, which joins the system message (one is
   created when there is none).
2. The request goes to MEMORY_PROXY_UPSTREAM_URL (its model renamed by
   MEMORY_PROXY_MODEL_MAP) and the upstream's answer comes back unchanged: streamed
   byte for byte as it arrives, or whole; tool calls and every other field untouched.
3. After the answer, the user's turn and the assistant's final answer are stored in a
   conversation (named by the ``X-Memory-Conversation`` header or the ``user`` field,
   else one per token per day), so extraction runs on it.

Memory off or paused (the privacy switch), a temporary conversation or
``X-Memory-Temporary: true`` skip both the injection and the storage. The token needs the
read scope (403 FORBIDDEN otherwise); without the ingest scope the exchange is not stored. A slash command (``/remember …``) as the last user message
is answered here, in the chat-completion shape, without calling the upstream. Errors
use OpenAI's shape ``{"error": {"message", "type", "code"}}``: the upstream's status for
its errors, 504 when it times out, 401 for a bad or expired token, 403 TOKEN_PAUSED
for a paused one. The upstream is called through the ``openai`` SDK's raw responses, so its
answer's bytes pass through as they come, untouched by the SDK's models.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
from django.conf import settings
from django.utils import timezone
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from accounts.models import ApiToken, TokenScope
from accounts.text import without_control_characters
from api.auth import ApiRequest, scope_refusal
from api.commands import CommandIn
from api.commands import command as command_endpoint
from api.conversations import (
    ConversationIn,
    MessagesIn,
    conversation_create,
    messages_add,
)
from api.errors import ApiError
from api.gateway import (
    Scope,
    TokenEndpoint,
    as_caller,
    header,
    scope_token,
    scratch_response,
)
from api.middleware import MAX_JSON_DEPTH, JsonTooDeep, read_json
from api.recall import PreviewIn
from api.recall import preview as preview_endpoint
from conversations.commands import CommandError
from core.openai_sdk import Endpoint

logger = logging.getLogger(__name__)

CLIENT = "openai-proxy"
# The first word of a message memoryapp answers itself (conversations/commands.py).
COMMAND_WORDS = {"/remember", "/remember-project", "/forget", "/memories", "/memory"}
RECENT_MESSAGES = 3
MAX_PREVIEW_CHARS = 20_000
MAX_STORED_CHARS = 100_000
# Response headers that describe the upstream connection, not the answer.
HOP_HEADERS = {
    "connection",
    "content-encoding",
    "content-length",
    "keep-alive",
    "transfer-encoding",
    "date",
    "server",
}


def openai_error(status: int, message: str, code: str, kind: str = "") -> JSONResponse:
    kind = kind or ("invalid_request_error" if status < 500 else "server_error")
    return JSONResponse(
        {"error": {"message": message, "type": kind, "param": None, "code": code}},
        status_code=status,
    )


def error_body(code: str, message: str) -> dict[str, Any]:
    """A refusal of the token (``gateway.TokenAuth``) in OpenAI's error shape."""
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    }


async def read_body(request: Request, limit: int) -> bytes | None:
    """The request's body, or None when it is over ``limit`` bytes (said by its
    Content-Length, or found reading it: then read no further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


def model_map() -> dict[str, str]:
    """MEMORY_PROXY_MODEL_MAP, e.g. ``gpt-4o=llama3,gpt-4o-mini=llama3:8b``."""
    pairs = (item.partition("=") for item in settings.MEMORY_PROXY_MODEL_MAP.split(","))
    return {name.strip(): target.strip() for name, _, target in pairs if name.strip() and target}


def text_of(content: Any) -> str:
    """A message's text (a string, or the text parts of a list of parts) as memoryapp reads
    and stores it: without control characters (the upstream gets the chat unchanged)."""
    if isinstance(content, str):
        return without_control_characters(content)
    if isinstance(content, list):
        return "\n".join(
            without_control_characters(str(part.get("text", "")))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def is_command(text: str) -> bool:
    words = text.strip().split(maxsplit=1)
    return bool(words) and words[0].lower() in COMMAND_WORDS


@dataclass
class Turn:
    """One chat request as the proxy reads it."""

    messages: list[dict[str, Any]]
    user_index: int | None
    conversation: str
    temporary: bool

    @property
    def user_text(self) -> str:
        return "" if self.user_index is None else text_of(self.messages[self.user_index]["content"])

    @property
    def recent(self) -> list[str]:
        before = self.messages[: self.user_index or 0]
        texts = [
            text_of(message.get("content"))
            for message in before
            if message.get("role") in ("user", "assistant")
        ]
        return [text for text in texts if text.strip()][-RECENT_MESSAGES:]

    @property
    def key(self) -> str:
        """The same request sent twice stores its turn once."""
        upto = self.messages[: (self.user_index or 0) + 1]
        return hashlib.sha256(json.dumps(upto, sort_keys=True).encode()).hexdigest()[:32]


def read_turn(body: dict[str, Any], scope: Scope, token: ApiToken) -> Turn:
    messages = body["messages"]
    user_index = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None
    )
    named = header(scope, "x-memory-conversation").strip() or str(body.get("user") or "").strip()
    conversation = named[:200] or f"{CLIENT}-{token.pk}-{timezone.localdate().isoformat()}"
    temporary = header(scope, "x-memory-temporary").strip().lower() in ("1", "true", "yes", "on")
    return Turn(messages, user_index, conversation, temporary)


# ORM work (in a worker thread) ------------------------------------------------------


def recall_block(request: ApiRequest, turn: Turn) -> tuple[str, bool]:
    """(the memory block to inject, whether to store the exchange)."""
    if turn.user_index is None:
        return "", False
    payload = PreviewIn.model_validate(
        {
            "message": turn.user_text[:MAX_PREVIEW_CHARS],
            "recent_messages": [text[:MAX_PREVIEW_CHARS] for text in turn.recent],
            "conversation_id": turn.conversation,
            "temporary": turn.temporary,
            "client": CLIENT,
        }
    )
    result = preview_endpoint(request, payload, scratch_response())
    # Memory off or paused, or a temporary conversation (said so, or stored as one): the
    # preview gives a reason, and nothing is recalled nor stored. A token without the ingest
    # scope recalls but does not store.
    stored = scope_refusal(request.api_token, TokenScope.INGEST) is None
    return result["block"], result["reason"] is None and stored


def run_command(request: ApiRequest, text: str) -> str:
    try:
        payload = CommandIn.model_validate({"command": text[:10_000]})
        return str(command_endpoint(request, payload)["reply"])
    except (ApiError, CommandError) as exc:
        # The command's own sentence (e.g. "Tell me what to remember …") is the answer.
        return exc.message


def store_exchange(request: ApiRequest, turn: Turn, answer: str) -> None:
    """The user's turn and the answer, in the conversation ``turn`` names (started for this
    client if new), through the JSON API's conversation and messages endpoints: a token's
    limit and the user's role apply as there (a token limited to a project stores in that
    project, never in a personal conversation)."""
    conversation = conversation_create(
        request, ConversationIn.model_validate({"external_id": turn.conversation, "client": CLIENT})
    ).value
    if conversation["temporary"]:
        return
    said = [("user", turn.user_text), ("assistant", without_control_characters(answer))]
    messages = [
        {"external_id": f"{turn.key}-{role}", "role": role, "content": text[:MAX_STORED_CHARS]}
        for role, text in said
        if text.strip()
    ]
    messages_add(request, conversation["id"], MessagesIn.model_validate({"messages": messages}))


async def store_later(scope: Scope, turn: Turn, answer: Answer) -> None:
    if not turn.user_text.strip():
        return
    try:
        await as_caller(scope, lambda request: store_exchange(request, turn, answer.text()))
    except ApiError as exc:
        logger.warning("The proxy did not store conversation %s: %s", turn.conversation, exc)
    except Exception:
        logger.exception("The proxy could not store conversation %s", turn.conversation)


# Answers ------------------------------------------------------------------------------


@dataclass
class Answer:
    """The assistant's final text, read from the upstream's answer as it passes."""

    parts: list[str] = field(default_factory=list)
    _pending: bytes = b""

    def text(self) -> str:
        return "".join(self.parts)

    def read_completion(self, content: bytes) -> None:
        try:
            message = json.loads(content)["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            return
        self.parts.append(text_of(message.get("content")))

    def feed_events(self, chunk: bytes) -> None:
        """Server-sent events: the content deltas of the first choice."""
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            line = line.strip()
            if not line.startswith(b"data:") or line == b"data: [DONE]":
                continue
            try:
                choices = json.loads(line[5:])["choices"]
            except (ValueError, KeyError, TypeError):
                continue
            for choice in choices:
                if choice.get("index", 0) == 0 and isinstance(choice.get("delta"), dict):
                    content = choice["delta"].get("content")
                    if isinstance(content, str):
                        self.parts.append(content)


def local_completion(reply: str, model: str, stream: bool) -> Response:
    """A reply of memoryapp's own, shaped as a chat completion (or its SSE chunks)."""
    ident = f"chatcmpl-memoryapp-{uuid.uuid4().hex}"
    created = int(time.time())
    if not stream:
        return JSONResponse(
            {
                "id": ident,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply},
                        "logprobs": None,
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }
        )

    def chunk(delta: dict[str, Any], finish: str | None) -> bytes:
        body = {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        return f"data: {json.dumps(body)}\n\n".encode()

    async def events() -> AsyncIterator[bytes]:
        yield chunk({"role": "assistant", "content": ""}, None)
        yield chunk({"content": reply}, None)
        yield chunk({}, "stop")
        yield b"data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


def upstream_error(status: int, content: bytes) -> Response:
    """The upstream's error as it sent it when in OpenAI's shape, else wrapped in it."""
    try:
        body = json.loads(content)
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            return JSONResponse(body, status_code=status)
    except ValueError:
        pass
    message = content.decode(errors="replace").strip()[:500] or f"HTTP {status}"
    return openai_error(status, f"The upstream model server answered: {message}", "UPSTREAM_ERROR")


def passed_headers(response: httpx2.Response) -> dict[str, str]:
    return {
        name: value for name, value in response.headers.items() if name.lower() not in HOP_HEADERS
    }


def upstream_timeout() -> Response:
    return openai_error(
        504, "The upstream model server did not answer in time.", "UPSTREAM_TIMEOUT", "timeout"
    )


# The endpoint -------------------------------------------------------------------------


class ProxyEndpoint(TokenEndpoint):
    """The ASGI app for /v1/: token auth around two routes, the openai SDK for upstream."""

    prefix = "/v1/"

    def __init__(self) -> None:
        # The SDK's client for the configured upstream, made by its first request.
        self.upstream: Endpoint | None = None
        self.client: openai.AsyncOpenAI | None = None
        routes = [
            Route("/v1/chat/completions", self.chat_completions, methods=["POST"]),
            Route("/v1/models", self.models, methods=["GET"]),
        ]
        app = Starlette(routes=routes, exception_handlers={HTTPException: self.http_error})
        super().__init__(app, error_body)  # type: ignore[arg-type]

    async def stop(self) -> None:
        if self.client is not None:
            await self.client.close()
            self.client = None

    async def http_error(self, request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        code = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}.get(status, "VALIDATION_ERROR")
        return openai_error(status, str(getattr(exc, "detail", "")) or "Not found.", code)

    async def upstream_client(self) -> openai.AsyncOpenAI | None:
        """The SDK's client for MEMORY_PROXY_UPSTREAM_URL (None: there is none), one while
        the settings stay the same, so that its connections are reused."""
        url = settings.MEMORY_PROXY_UPSTREAM_URL.rstrip("/")
        if not url:
            return None
        upstream = Endpoint(
            base_url=url,
            api_key=settings.MEMORY_PROXY_UPSTREAM_API_KEY,
            timeout=settings.MEMORY_PROXY_TIMEOUT,
        )
        if self.client is None or upstream != self.upstream:
            await self.stop()
            seconds = upstream.timeout
            self.client = openai.AsyncOpenAI(
                base_url=url,
                api_key=upstream.sdk_key,
                # Per read, not for the whole answer: a stream goes on while bytes come.
                timeout=httpx2.Timeout(seconds, connect=min(seconds, 10.0)),
                # The app's own client retries what it wants: once here, or its retries
                # would be multiplied.
                max_retries=0,
            )
            self.upstream = upstream
        return self.client

    def not_configured(self) -> Response:
        return openai_error(
            503,
            "This memoryapp server has no upstream model server; its admin sets "
            "MEMORY_PROXY_UPSTREAM_URL.",
            "PROXY_NOT_CONFIGURED",
        )

    async def send(
        self, client: openai.AsyncOpenAI, path: str, body: Any = None, *, stream: bool = False
    ) -> httpx2.Response | Response:
        """The upstream's response as it sent it (a POST when there is a ``body``, else a
        GET), or our error for its failure. Streamed: headers read, the body not; otherwise
        read whole."""
        assert self.upstream is not None
        # Identity: the bytes are passed on as they come, without a Content-Encoding.
        options: openai.RequestOptions = {
            "headers": {"Accept-Encoding": "identity", **self.upstream.headers}
        }
        try:
            if body is None:
                return await client.get(
                    path, cast_to=httpx2.Response, options=options, stream=stream
                )
            return await client.post(
                path, body=body, cast_to=httpx2.Response, options=options, stream=stream
            )
        except openai.APIStatusError as exc:
            return upstream_error(exc.status_code, exc.response.content)
        except openai.APITimeoutError:
            return upstream_timeout()
        except openai.APIConnectionError as exc:
            logger.warning("Proxy upstream %s%s failed: %r", client.base_url, path, exc.__cause__)
            return openai_error(
                502, "The upstream model server could not be reached.", "UPSTREAM_UNAVAILABLE"
            )

    async def models(self, request: Request) -> Response:
        client = await self.upstream_client()
        if client is None:
            return self.not_configured()
        response = await self.send(client, "/models")
        if isinstance(response, Response):
            return response
        try:
            listing = json.loads(response.content)
            known = {model.get("id") for model in listing["data"]}
        except (ValueError, KeyError, TypeError, AttributeError):
            return Response(response.content, response.status_code, passed_headers(response))
        # The names clients may ask for, as the model map renames them.
        for alias in model_map():
            if alias not in known:
                listing["data"].append(
                    {"id": alias, "object": "model", "created": 0, "owned_by": "memoryapp"}
                )
        return JSONResponse(listing)

    async def chat_completions(self, request: Request) -> Response:
        token = scope_token(request.scope)
        refusal = scope_refusal(token, TokenScope.READ)
        if refusal is not None:
            return openai_error(refusal.status, refusal.message, refusal.code, "permission_error")
        raw = await read_body(request, settings.MEMORY_PROXY_MAX_BODY_BYTES)
        if raw is None:
            return openai_error(
                413,
                f"The request body is over {settings.MEMORY_PROXY_MAX_BODY_BYTES} bytes.",
                "PAYLOAD_TOO_LARGE",
            )
        try:
            body = read_json(raw)
        except JsonTooDeep:
            return openai_error(
                400, f"The JSON body nests deeper than {MAX_JSON_DEPTH} levels.", "VALIDATION_ERROR"
            )
        except ValueError:
            return openai_error(400, "The body is not JSON.", "VALIDATION_ERROR")
        messages = body.get("messages") if isinstance(body, dict) else None
        if (
            not isinstance(messages, list)
            or not messages
            or not all(isinstance(message, dict) for message in messages)
        ):
            return openai_error(
                400, "'messages' must be a non-empty list of messages.", "VALIDATION_ERROR"
            )
        turn = read_turn(body, request.scope, token)
        stream = bool(body.get("stream"))
        model = str(body.get("model") or "")

        if turn.user_index == len(messages) - 1 and is_command(turn.user_text):
            reply = await as_caller(request.scope, lambda api: run_command(api, turn.user_text))
            return local_completion(reply, model, stream)
        client = await self.upstream_client()
        if client is None:
            return self.not_configured()

        block, store = await as_caller(request.scope, lambda api: recall_block(api, turn))
        if block:
            body["messages"] = with_memory(messages, block)
        if model:
            body["model"] = model_map().get(model, model)

        response = await self.send(client, "/chat/completions", body, stream=stream)
        if isinstance(response, Response):
            return response
        answer = Answer()
        later = BackgroundTask(store_later, request.scope, turn, answer) if store else None

        if not stream:
            answer.read_completion(response.content)
            return Response(
                response.content, response.status_code, passed_headers(response), background=later
            )

        async def passthrough() -> AsyncIterator[bytes]:
            try:
                async for chunk in response.aiter_raw():
                    answer.feed_events(chunk)
                    yield chunk
            except httpx2.TimeoutException:
                logger.warning("Proxy upstream stopped sending mid-answer (timeout)")
            finally:
                await response.aclose()

        return StreamingResponse(
            passthrough(), response.status_code, passed_headers(response), background=later
        )


def with_memory(messages: list[dict[str, Any]], block: str) -> list[dict[str, Any]]:
    """The messages with the memory block added to the first system message (or a new one)."""
    messages = list(messages)
    for index, message in enumerate(messages):
        if message.get("role") in ("system", "developer"):
            content = message.get("content")
            if isinstance(content, list):
                content = [*content, {"type": "text", "text": block}]
            else:
                content = f"{content or ''}\n\n{block}".strip()
            messages[index] = {**message, "content": content}
            return messages
    return [{"role": "system", "content": block}, *messages]
