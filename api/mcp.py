"""The MCP server at /mcp (streamable HTTP): memoryapp's memory as tools for any MCP client.

Built with the official MCP SDK. Every tool calls the JSON API's own endpoint function
(api/memories.py, api/recall.py, api/commands.py) with the token's user, so memory off,
temporary conversations, permissions and validation behave exactly as in /api/v1/. A
refusal comes back as a tool error (``isError``) whose text starts with the API's
stable code (``NOT_FOUND: No memory 12.``) and whose structured content is the API's
error body ``{"error": {"code", "message", "details"}}``.

The token's scopes (``api.auth``) hold as in /api/v1/, since the tools call the same
endpoint functions: read for get_memory_context, search_memories and list_memories; write
for add, update, delete, restore, remember and forget. A paused token is refused (403
TOKEN_PAUSED) before any tool runs.

The server is stateless (each POST stands alone, JSON answers): any web worker can
answer any request, and authentication is checked on every one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal

import pydantic
from django.conf import settings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from api.auth import ApiRequest
from api.commands import CommandIn
from api.commands import command as command_endpoint
from api.errors import ApiError
from api.gateway import (
    Receive,
    Scope,
    Send,
    TokenEndpoint,
    as_caller,
    scratch_response,
)
from api.memories import (
    ListFilters,
    MemoryIn,
    MemoryOut,
    MemoryPatch,
    SearchParams,
    memory_create,
    memory_delete,
    memory_list,
    memory_restore,
    memory_search,
    memory_update,
    visible_memory,
)
from api.middleware import control_character_paths, control_characters_refusal
from api.recall import PreviewIn
from api.recall import preview as preview_endpoint
from conversations.commands import CommandError
from memories.models import Memory

logger = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Long-term memory of the user, kept by memoryapp. Before answering a message, call "
    "get_memory_context with it and follow what it returns. When the user asks you to "
    "remember or forget something, call remember or forget. Memories the user deleted "
    "go to the Trash and can be restored."
)

ProjectRef = Annotated[
    str | None, Field(description="A project's id or slug: its shared memories join in.")
]
KindArg = Annotated[
    str | None,
    Field(description="fact, preference, instruction, event, relationship or skill (or alias)."),
]
ScopeArg = Annotated[Literal["user", "project", "conversation"] | None, Field(description="Scope.")]
MemoryId = Annotated[int, Field(description="The memory's id.", ge=1)]


# Results ----------------------------------------------------------------------


def ok(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def failure(code: str, message: str, details: dict[str, Any] | None = None) -> CallToolResult:
    """A tool error in the JSON API's words: ``CODE: message`` and its error body."""
    return CallToolResult(
        content=[TextContent(type="text", text=f"{code}: {message}")],
        structured_content={"error": {"code": code, "message": message, "details": details or {}}},
        is_error=True,
    )


def _fields(errors: list[Any]) -> dict[str, Any]:
    return {
        "fields": [
            {"field": ".".join(str(part) for part in error.get("loc", ())), "message": error["msg"]}
            for error in errors
        ]
    }


def memory_line(memory: Memory) -> str:
    pin = " 📌" if memory.pinned else ""
    return f"#{memory.pk} [{memory.kind}, {memory.scope}]{pin} {memory.content}"


def memory_data(memory: Memory) -> dict[str, Any]:
    return MemoryOut.from_orm(memory).model_dump(mode="json")


async def call(ctx: Context, work: Callable[[ApiRequest], CallToolResult]) -> CallToolResult:
    """Run ``work`` with the caller's API request in a worker thread; refusals become tool errors."""

    def guarded(request: ApiRequest) -> CallToolResult:
        try:
            return work(request)
        except ApiError as exc:
            return failure(exc.code, exc.message, exc.details)
        except CommandError as exc:
            return failure(exc.code, exc.message)
        except pydantic.ValidationError as exc:
            return failure(
                "VALIDATION_ERROR", "The arguments are not valid.", _fields(exc.errors())
            )

    return await as_caller(ctx.request_context.request.scope, guarded)  # type: ignore[union-attr]


class MemoryMCPServer(MCPServer[Any]):
    """Arguments that fail a tool's input schema, or hold control characters, answer
    VALIDATION_ERROR, as in the API."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        fields = list(control_character_paths(arguments))
        if fields:
            return failure("VALIDATION_ERROR", *control_characters_refusal(fields))
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            logger.exception("MCP tool %s failed", name)
            return failure("INTERNAL_ERROR", "Something went wrong on the server; it was logged.")
        except ToolError as exc:
            if isinstance(exc.__cause__, pydantic.ValidationError):
                return failure(
                    "VALIDATION_ERROR",
                    "The arguments are not valid.",
                    _fields(exc.__cause__.errors()),
                )
            return failure("VALIDATION_ERROR", str(exc))


READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


async def get_memory_context(
    message: Annotated[str, Field(description="The user's new message.")],
    ctx: Context,
    recent_messages: Annotated[
        list[str], Field(description="Earlier messages, oldest first (the last 3 count).")
    ] = [],  # noqa: B006 (pydantic copies defaults)
    conversation_id: Annotated[
        str | None, Field(description="Your conversation's id, if it was stored.")
    ] = None,
    project: ProjectRef = None,
    temporary: Annotated[bool, Field(description="A private chat: nothing is recalled.")] = False,
    format: Literal["markdown", "xml", "json"] = "markdown",
) -> CallToolResult:
    """What memoryapp remembers that matters for this message: a block to read before
    answering (the same as the injection preview). Call it with each new user message."""

    def work(request: ApiRequest) -> CallToolResult:
        payload = PreviewIn.model_validate(
            {
                "message": message,
                "recent_messages": recent_messages,
                "conversation_id": conversation_id,
                "project": project,
                "temporary": temporary,
                "format": format,
                "client": "mcp",
            }
        )
        result = preview_endpoint(request, payload, scratch_response())
        if not result["enabled"] or result["reason"]:
            text = result["message"]
        else:
            text = result["block"] or "No stored memory is relevant to this message."
        data = {key: result[key] for key in ("enabled", "reason", "message", "block", "hash")}
        data["memory_ids"] = [memory["id"] for memory in result["memories"]]
        # With Show memory references on: what each [n] in the block stands for.
        data["references"] = result["references"]
        return ok(text, data)

    return await call(ctx, work)


async def search_memories(
    query: Annotated[str, Field(description="Words or a question.")],
    ctx: Context,
    kind: KindArg = None,
    scope: ScopeArg = None,
    project: ProjectRef = None,
    tag: str | None = None,
    limit: Annotated[int, Field(ge=1, le=100)] = 10,
) -> CallToolResult:
    """Search the user's memories (keywords and meaning), best match first."""

    def work(request: ApiRequest) -> CallToolResult:
        params = SearchParams.model_validate(
            {
                "q": query,
                "kind": kind,
                "scope": scope,
                "project": project,
                "tag": tag,
                "limit": limit,
            }
        )
        result = memory_search(request, params)
        hits = result["results"]
        lines = [f"{memory_line(hit['memory'])} (score {hit['score']:.2f})" for hit in hits]
        return ok(
            "\n".join(lines) or f"No memory matches “{query}”.",
            {
                "results": [
                    {"memory": memory_data(hit["memory"]), "score": hit["score"]} for hit in hits
                ]
            },
        )

    return await call(ctx, work)


async def list_memories(
    ctx: Context,
    state: Literal["active", "pending", "rejected", "trash", "forgotten", "all"] = "active",
    kind: KindArg = None,
    scope: ScopeArg = None,
    project: ProjectRef = None,
    tag: str | None = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
    cursor: Annotated[str | None, Field(description="next_cursor of the previous page.")] = None,
) -> CallToolResult:
    """List the user's memories, newest first (state=trash lists the Trash)."""

    def work(request: ApiRequest) -> CallToolResult:
        params = ListFilters.model_validate(
            {
                "state": state,
                "kind": kind,
                "scope": scope,
                "project": project,
                "tag": tag,
                "limit": limit,
                "cursor": cursor,
            }
        )
        page = memory_list(request, params)
        lines = [memory_line(memory) for memory in page["items"]]
        if page["next_cursor"]:
            lines.append(f"(more: cursor={page['next_cursor']})")
        return ok(
            "\n".join(lines) or "No memories.",
            {
                "items": [memory_data(memory) for memory in page["items"]],
                "next_cursor": page["next_cursor"],
            },
        )

    return await call(ctx, work)


async def add_memory(
    content: Annotated[str, Field(description="The memory, one self-contained sentence.")],
    ctx: Context,
    kind: Annotated[
        str, Field(description="fact, preference, instruction, event, relationship or skill.")
    ] = "fact",
    scope: Literal["user", "project", "conversation"] = "user",
    project: ProjectRef = None,
    conversation_id: Annotated[
        str | None, Field(description="Your conversation's id (scope=conversation).")
    ] = None,
    tags: list[str] = [],  # noqa: B006 (pydantic copies defaults)
    pinned: Annotated[bool, Field(description="Always recalled.")] = False,
    importance: Annotated[float | None, Field(ge=0, le=1)] = None,
) -> CallToolResult:
    """Add a memory for the user (refused while their memory is off)."""

    def work(request: ApiRequest) -> CallToolResult:
        fields: dict[str, Any] = {
            "content": content,
            "kind": kind,
            "scope": scope,
            "project": project,
            "conversation_id": conversation_id,
            "tags": tags,
            "pinned": pinned,
            "importance": importance,
        }
        created = memory_create(request, MemoryIn.model_validate(fields))
        memory = created.value
        return ok(f"Added {memory_line(memory)}", {"memory": memory_data(memory)})

    return await call(ctx, work)


async def update_memory(
    memory_id: MemoryId,
    ctx: Context,
    content: str | None = None,
    kind: KindArg = None,
    tags: list[str] | None = None,
    pinned: bool | None = None,
    importance: Annotated[float | None, Field(ge=0, le=1)] = None,
    revision: Annotated[
        int | None,
        Field(description="The revision you read: a newer one answers CONFLICT. Optional."),
    ] = None,
) -> CallToolResult:
    """Change a memory's text, kind, tags, pin or importance (its history keeps the old one)."""

    def work(request: ApiRequest) -> CallToolResult:
        changes = {
            key: value
            for key, value in {
                "content": content,
                "kind": kind,
                "tags": tags,
                "pinned": pinned,
                "importance": importance,
            }.items()
            if value is not None
        }
        current = revision if revision is not None else visible_memory(request, memory_id).revision
        patch = MemoryPatch.model_validate({"revision": current, **changes})
        memory = memory_update(request, memory_id, patch)
        return ok(f"Updated {memory_line(memory)}", {"memory": memory_data(memory)})

    return await call(ctx, work)


async def delete_memory(memory_id: MemoryId, ctx: Context) -> CallToolResult:
    """Move a memory to the Trash: it is no longer recalled; restore_memory brings it back."""

    def work(request: ApiRequest) -> CallToolResult:
        memory = memory_delete(request, memory_id)
        return ok(
            f"Moved memory #{memory.pk} to the Trash; restore_memory brings it back.",
            {"memory": memory_data(memory)},
        )

    return await call(ctx, work)


async def restore_memory(memory_id: MemoryId, ctx: Context) -> CallToolResult:
    """Bring a memory back from the Trash (or from being forgotten)."""

    def work(request: ApiRequest) -> CallToolResult:
        memory = memory_restore(request, memory_id)
        return ok(f"Restored {memory_line(memory)}", {"memory": memory_data(memory)})

    return await call(ctx, work)


def run_command(request: ApiRequest, text: str, project: str | None) -> CallToolResult:
    payload = CommandIn.model_validate({"command": text, "project": project})
    reply = command_endpoint(request, payload)
    return ok(
        reply["reply"],
        {
            "command": reply["command"],
            "reply": reply["reply"],
            "language": reply["language"],
            "changed": reply["changed"],
            "memory_ids": [memory.pk for memory in reply["memories"]],
            "undo_token": str(reply["undo_token"]) if reply["undo_token"] else None,
        },
    )


async def remember(
    text: Annotated[str, Field(description="What to remember, in the user's words.")],
    ctx: Context,
    project: Annotated[
        str | None, Field(description="A project's id or slug: remember it for the project.")
    ] = None,
) -> CallToolResult:
    """The /remember slash command: remember this for the user (or /remember-project for a
    project) and answer with the sentence to show them."""
    command = "/remember-project" if project else "/remember"
    return await call(ctx, lambda request: run_command(request, f"{command} {text}", project))


async def forget(
    words: Annotated[
        str, Field(description="Words the memories to forget contain, or --all for all.")
    ],
    ctx: Context,
) -> CallToolResult:
    """The /forget slash command: move the user's personal memories matching these words to
    the Trash (restorable) and answer with the sentence to show them."""
    return await call(ctx, lambda request: run_command(request, f"/forget {words}", None))


# Each tool with what it tells a client about its effects.
TOOLS: list[tuple[Callable[..., Any], ToolAnnotations]] = [
    (get_memory_context, READ_ONLY),
    (search_memories, READ_ONLY),
    (list_memories, READ_ONLY),
    (add_memory, WRITES),
    (update_memory, WRITES),
    (delete_memory, DESTRUCTIVE),
    (restore_memory, WRITES),
    (remember, WRITES),
    (forget, DESTRUCTIVE),
]


def build_server() -> MemoryMCPServer:
    server = MemoryMCPServer(
        name="memoryapp", title="memoryapp", instructions=INSTRUCTIONS, version="1"
    )
    for tool, hints in TOOLS:
        server.tool(annotations=hints)(tool)
    return server


def transport_security() -> TransportSecuritySettings:
    """Host and Origin checks against DNS rebinding, from Django's ALLOWED_HOSTS."""
    hosts = [host for host in settings.ALLOWED_HOSTS if host != "testserver"]
    if "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    allowed = [pattern for host in hosts for pattern in (host, f"{host}:*")]
    origins = [
        f"{scheme}://{pattern}" for pattern in allowed for scheme in ("http", "https")
    ] + list(settings.CSRF_TRUSTED_ORIGINS)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=allowed, allowed_origins=origins
    )


class McpEndpoint(TokenEndpoint):
    """The ASGI app for /mcp: token auth around the SDK's streamable HTTP app.

    The SDK's session manager must run for the app to answer; ``start`` and ``stop``
    are called from the ASGI lifespan, and the first request starts it when the server
    has no lifespan.
    """

    path = "/mcp"

    def __init__(self) -> None:
        self.server = build_server()
        http_app = self.server.streamable_http_app(
            streamable_http_path=self.path,
            stateless_http=True,
            json_response=True,
            transport_security=transport_security(),
        )
        super().__init__(
            http_app,  # type: ignore[arg-type]
            lambda code, message: {"error": {"code": code, "message": message, "details": {}}},
        )
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        async with self._lock:
            if self._task is not None:
                return
            running = asyncio.Event()

            async def run() -> None:
                async with self.server.session_manager.run():
                    running.set()
                    await self._stopping.wait()

            self._task = asyncio.create_task(run())
            started = asyncio.create_task(running.wait())
            await asyncio.wait({self._task, started}, return_when=asyncio.FIRST_COMPLETED)
            if self._task.done():
                started.cancel()
                self._task.result()  # the session manager failed: say why

    async def stop(self) -> None:
        if self._task is None:
            return
        self._stopping.set()
        with contextlib.suppress(Exception):
            await self._task

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._task is None:
            await self.start()
        await super().__call__(scope, receive, send)
