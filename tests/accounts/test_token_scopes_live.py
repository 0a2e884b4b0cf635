"""Token scopes and pause at /mcp and /v1/ (the same check as the JSON API's), against a
live server."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import openai
import pytest
from mcp import ClientSession

from accounts.models import ApiToken, MemorySettings
from conversations.models import Conversation
from memories.models import Memory
from tests.api.test_mcp import error
from tests.api.test_mcp import with_session as mcp_session
from tests.live_asgi import FakeUpstream, live_asgi_server
from tests.recall_helpers import remember

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def upstream(settings: Any) -> Iterator[FakeUpstream]:
    with FakeUpstream() as fake:
        settings.MEMORY_PROXY_UPSTREAM_URL = fake.url
        settings.MEMORY_PROXY_UPSTREAM_API_KEY = "sk-upstream"
        yield fake


@pytest.fixture
def server(upstream: FakeUpstream) -> Iterator[str]:
    with live_asgi_server() as url:
        yield url


def with_session(url: str, secret: str, steps: Any) -> Any:
    """The MCP client in a thread of its own: a browser test earlier in the run may have
    left an event loop running in this one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(mcp_session, url, secret, steps).result()


def secret(user: Any, **options: Any) -> str:
    return ApiToken.issue(user=user, name="scoped", **options)[1]


def mcp_calls(server: str, secret: str, memory_id: int) -> dict[str, Any]:
    async def steps(session: ClientSession) -> dict[str, Any]:
        return {
            "read": await session.call_tool("search_memories", {"query": "tabs"}),
            "context": await session.call_tool("get_memory_context", {"message": "tabs?"}),
            "write": await session.call_tool("add_memory", {"content": "Likes tea"}),
            "delete": await session.call_tool("delete_memory", {"memory_id": memory_id}),
            "remember": await session.call_tool("remember", {"text": "Likes coffee"}),
        }

    return with_session(server, secret, steps)


def test_mcp_read_scope_reads_and_may_not_write(server, alice):
    memory = remember(alice, "Prefers tabs over spaces")
    results = mcp_calls(server, secret(alice, scopes=["read"]), memory.pk)
    assert not results["read"].is_error and not results["context"].is_error
    for name in ("write", "delete", "remember"):
        assert error(results[name])["code"] == "FORBIDDEN", name
    assert list(Memory.objects.alive().values_list("content", flat=True)) == [memory.content]


def test_mcp_write_scope_writes_and_may_not_read(server, alice):
    memory = remember(alice, "Prefers tabs over spaces")
    results = mcp_calls(server, secret(alice, scopes=["write"]), memory.pk)
    assert error(results["read"])["code"] == "FORBIDDEN"
    assert error(results["context"])["code"] == "FORBIDDEN"
    assert not results["write"].is_error and not results["delete"].is_error


def test_mcp_ingest_scope_alone_may_do_no_memory_tool(server, alice):
    memory = remember(alice, "Prefers tabs over spaces")
    results = mcp_calls(server, secret(alice, scopes=["ingest"]), memory.pk)
    assert {error(result)["code"] for result in results.values()} == {"FORBIDDEN"}


def test_paused_token_at_mcp_and_proxy(server, alice):
    token, paused = ApiToken.issue(user=alice, name="paused")
    token.pause()
    response = httpx2.post(
        f"{server}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {paused}", "Accept": "application/json"},
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "TOKEN_PAUSED"
    proxy = httpx2.post(
        f"{server}/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": f"Bearer {paused}"},
    )
    assert proxy.status_code == 403
    assert proxy.json()["error"]["code"] == "TOKEN_PAUSED"


def proxy_client(server: str, secret: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server}/v1", api_key=secret, max_retries=0)


def test_proxy_needs_read_and_stores_only_with_ingest(server, upstream, alice):
    remember(alice, "Prefers tabs over spaces in Python code")
    ask: list[Any] = [{"role": "user", "content": "Tabs for Python code?"}]

    with pytest.raises(openai.PermissionDeniedError) as refused:
        proxy_client(server, secret(alice, scopes=["ingest"])).chat.completions.create(
            model="m", messages=ask
        )
    assert refused.value.code == "FORBIDDEN"
    assert not upstream.requests

    proxy_client(server, secret(alice, scopes=["read"])).chat.completions.create(
        model="m", messages=ask
    )
    assert "tabs" in upstream.requests[-1]["body"]["messages"][0]["content"]
    time.sleep(0.3)
    assert not Conversation.objects.exists()

    proxy_client(server, secret(alice, scopes=["read", "ingest"])).chat.completions.create(
        model="m", messages=ask
    )
    deadline = time.monotonic() + 10
    while not Conversation.objects.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert Conversation.objects.exists()


def test_proxy_while_memory_is_paused_injects_and_stores_nothing(server, upstream, alice):
    remember(alice, "Prefers tabs over spaces in Python code")
    MemorySettings.for_user(alice).pause(None)
    proxy_client(server, secret(alice)).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "Tabs for Python code?"}]
    )
    assert upstream.requests[-1]["body"]["messages"][0]["role"] == "user"
    time.sleep(0.3)
    assert not Conversation.objects.exists()


def test_mcp_context_while_paused_says_so(server, alice):
    remember(alice, "Prefers tabs over spaces")
    MemorySettings.for_user(alice).pause(None)
    result = with_session(
        server, secret(alice), lambda s: s.call_tool("get_memory_context", {"message": "tabs?"})
    )
    assert result.structured_content["reason"] == "privacy_paused"
    assert "tabs" not in result.structured_content["block"]


def test_mcp_context_carries_the_references_when_citations_are_on(server, alice):
    memory = remember(alice, "Prefers tabs over spaces")
    MemorySettings.objects.filter(user=alice).update(show_citations=True)
    result = with_session(
        server, secret(alice), lambda s: s.call_tool("get_memory_context", {"message": "tabs?"})
    )
    assert "- [1] Prefers tabs over spaces" in result.structured_content["block"]
    assert result.structured_content["references"] == [
        {
            "n": 1,
            "id": memory.pk,
            "kind": memory.kind,
            "url": f"/settings/memories?memory={memory.pk}",
        }
    ]
