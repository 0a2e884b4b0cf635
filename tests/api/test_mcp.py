"""The MCP server at /mcp, through the MCP SDK's own client against a live uvicorn server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from accounts.models import ApiToken, MemorySettings
from memories.models import Memory
from tests.live_asgi import live_asgi_server
from tests.recall_helpers import remember

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def server() -> Iterator[str]:
    with live_asgi_server() as url:
        yield url


def secret_for(user: Any) -> str:
    return ApiToken.issue(user=user, name="Claude Desktop")[1]


def with_session(url: str, secret: str, steps: Any, **extra_headers: str) -> Any:
    """Run ``steps(session)`` in an initialized MCP client session sending ``secret``."""

    async def main() -> Any:
        headers = {"Authorization": f"Bearer {secret}", **extra_headers}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await steps(session)

    # In a thread of its own: a browser test's Playwright keeps an event loop running in
    # the main thread for the rest of the session.
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, main()).result()


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def error(result: Any) -> dict[str, Any]:
    assert result.is_error, text(result)
    return result.structured_content["error"]


def test_tools_listed_with_descriptions_and_schemas(server, alice):
    tools = with_session(server, secret_for(alice), lambda s: s.list_tools())

    by_name = {tool.name: tool for tool in tools.tools}
    assert set(by_name) >= {
        "get_memory_context",
        "search_memories",
        "add_memory",
        "list_memories",
        "update_memory",
        "delete_memory",
        "remember",
        "forget",
    }
    for tool in by_name.values():
        assert tool.description and len(tool.description) > 20
        assert tool.input_schema["type"] == "object"
    assert by_name["add_memory"].input_schema["required"] == ["content"]
    assert by_name["update_memory"].input_schema["properties"]["memory_id"]["type"] == "integer"


def test_every_tool_round_trip(server, alice):
    remember(alice, "Prefers tabs over spaces in Python code")

    async def steps(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["added"] = await session.call_tool(
            "add_memory", {"content": "Deploys with Ansible on Fridays", "tags": ["ops"]}
        )
        memory_id = out["added"].structured_content["memory"]["id"]
        out["context"] = await session.call_tool(
            "get_memory_context", {"message": "How should I indent my Python code?"}
        )
        out["search"] = await session.call_tool("search_memories", {"query": "Ansible"})
        out["list"] = await session.call_tool("list_memories", {})
        out["update"] = await session.call_tool(
            "update_memory", {"memory_id": memory_id, "content": "Deploys with Ansible on Mondays"}
        )
        out["delete"] = await session.call_tool("delete_memory", {"memory_id": memory_id})
        out["trash"] = await session.call_tool("list_memories", {"state": "trash"})
        out["restore"] = await session.call_tool("restore_memory", {"memory_id": memory_id})
        out["remember"] = await session.call_tool("remember", {"text": "Always use vitest"})
        out["forget"] = await session.call_tool("forget", {"words": "vitest"})
        return out

    out = with_session(server, secret_for(alice), steps)

    for name, result in out.items():
        assert not result.is_error, (name, text(result))
    assert "Deploys with Ansible on Fridays" in text(out["added"])
    assert "Prefers tabs over spaces" in text(out["context"])
    assert out["context"].structured_content["enabled"] is True
    assert "Ansible" in text(out["search"])
    assert len(out["list"].structured_content["items"]) == 2
    memory_id = out["added"].structured_content["memory"]["id"]
    assert out["update"].structured_content["memory"]["revision"] == 2
    assert "Trash" in text(out["delete"])
    assert [item["id"] for item in out["trash"].structured_content["items"]] == [memory_id]
    assert Memory.objects.get(pk=memory_id).content == "Deploys with Ansible on Mondays"
    assert Memory.objects.get(pk=memory_id).deleted_at is None
    # The slash commands' own replies.
    assert text(out["remember"]) == "Remembered: “Always use vitest”."
    assert text(out["forget"]).startswith("Forgot 1 memory:\n- Always use vitest")
    assert out["forget"].structured_content["undo_token"]
    assert not Memory.objects.alive().filter(content="Always use vitest").exists()
    # The API token is the actor in the memory's history.
    labels = set(Memory.objects.get(pk=memory_id).events.values_list("actor_label", flat=True))
    assert labels == {"API token “Claude Desktop”"}


def test_replies_in_the_callers_language(server, alice):
    result = with_session(
        server,
        secret_for(alice),
        lambda s: s.call_tool("remember", {"text": "I prefer tabs"}),
        **{"Accept-Language": "zh-CN,zh;q=0.9"},
    )
    assert text(result) == "已记住：“I prefer tabs”。"


def test_memory_off(server, alice):
    remember(alice, "Prefers tabs over spaces")
    MemorySettings.objects.filter(user=alice).update(memory_enabled=False)

    async def steps(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("add_memory", {"content": "Likes tea"}),
            await session.call_tool("get_memory_context", {"message": "tabs or spaces?"}),
            await session.call_tool("remember", {"text": "Likes tea"}),
        ]

    added, context, remembered = with_session(server, secret_for(alice), steps)

    assert error(added)["code"] == "MEMORY_DISABLED"
    assert text(added).startswith("MEMORY_DISABLED: ")
    # As in the API: the preview answers, empty, with its reason; the command says memory is off.
    assert context.structured_content["reason"] == "memory_disabled"
    assert "Memory is off" in text(context)
    assert text(remembered).startswith("Memory is off, so nothing was changed.")
    assert text(remembered).endswith(f"{server}/settings/memories#memory-settings")
    assert Memory.objects.count() == 1


def test_temporary_conversation_recalls_nothing(server, alice):
    remember(alice, "Prefers tabs over spaces")
    result = with_session(
        server,
        secret_for(alice),
        lambda s: s.call_tool("get_memory_context", {"message": "tabs?", "temporary": True}),
    )
    assert result.structured_content["reason"] == "temporary_conversation"
    assert "tabs" not in result.structured_content["block"]


def test_strangers_memory_is_not_found(server, alice, charlie):
    memory = remember(alice, "Alice's secret plan")

    async def steps(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("update_memory", {"memory_id": memory.pk, "content": "mine"}),
            await session.call_tool("delete_memory", {"memory_id": memory.pk}),
            await session.call_tool("search_memories", {"query": "secret plan"}),
        ]

    update, delete, search = with_session(server, secret_for(charlie), steps)

    assert error(update)["code"] == "NOT_FOUND"
    assert error(delete)["code"] == "NOT_FOUND"
    assert search.structured_content["results"] == []
    memory.refresh_from_db()
    assert memory.content == "Alice's secret plan" and memory.deleted_at is None


def test_viewer_may_not_change_project_memory(server, alice, vera, project):
    memory = remember(alice, "Uses Drizzle ORM", scope="project", project=project)
    result = with_session(
        server,
        secret_for(vera),
        lambda s: s.call_tool("delete_memory", {"memory_id": memory.pk}),
    )
    assert error(result)["code"] == "FORBIDDEN"


def test_bad_arguments_are_validation_errors(server, alice):
    async def steps(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("delete_memory", {"memory_id": "not a number"}),
            await session.call_tool("add_memory", {"content": "x", "kind": "feeling"}),
            await session.call_tool("add_memory", {"content": ""}),
            await session.call_tool("remember", {"text": ""}),
        ]

    wrong_type, wrong_kind, empty, empty_command = with_session(server, secret_for(alice), steps)

    assert error(wrong_type)["code"] == "VALIDATION_ERROR"
    assert error(wrong_type)["details"]["fields"][0]["field"] == "memory_id"
    assert error(wrong_kind)["code"] == "VALIDATION_ERROR"
    assert "unknown kind" in error(wrong_kind)["details"]["fields"][0]["message"]
    assert error(empty)["code"] == "VALIDATION_ERROR"
    assert error(empty_command)["code"] == "VALIDATION_ERROR"
    assert "Tell me what to remember" in error(empty_command)["message"]


def test_control_characters_in_arguments_are_validation_errors(server, alice):
    """Issue 42, item 9: NUL reached PostgreSQL (a DataError, INTERNAL_ERROR)."""

    async def steps(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("add_memory", {"content": "Likes tea\u0000"}),
            await session.call_tool("get_memory_context", {"message": "tea?\u0000"}),
        ]

    for result in with_session(server, secret_for(alice), steps):
        assert error(result)["code"] == "VALIDATION_ERROR"
    assert not Memory.objects.exists()


def test_bad_token_is_refused(server, alice):
    response = httpx2.post(
        f"{server}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": "Bearer mem_wrong", "Accept": "application/json"},
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"
    assert response.headers["www-authenticate"] == "Bearer"


def test_pages_and_api_served_beside_it(server, alice):
    secret = secret_for(alice)
    assert httpx2.get(f"{server}/healthz").status_code in (200, 503)
    assert httpx2.get(f"{server}/accounts/login/").status_code == 200
    me = httpx2.get(f"{server}/api/v1/me", headers={"Authorization": f"Bearer {secret}"})
    assert me.status_code == 200 and me.json()["email"] == "alice@example.com"
