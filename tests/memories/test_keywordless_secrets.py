"""Secrets said without a keyword (a password after "the new one is", 新的那串是, a master code,
a Luhn-valid card number, a 身份证号 with its check digit) are never stored, whichever way
they come in: extraction, /remember, the API, the page, an import, MCP and the proxy. All of
them go through memories.sensitive."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conversations.models import Message
from imports import services as imports
from memories.models import Memory
from tests.conftest import client_for
from tests.recall_helpers import ApiClient

# (said, the secret in it)
KEYWORDLESS = [
    ("Got the mesh working. The new one for the router is Pierogi!Tuesday88", "Pierogi!Tuesday88"),
    ("My parents live in Galway. The master code they picked is 7305.", "7305"),
    ("家里新装了小米路由器，新的那串是 maomao@2024xm，写这儿省得我忘了。", "maomao@2024xm"),
    ("All my subscriptions go on my Monzo card: 5355 2210 4471 9088.", "4471 9088"),
    ("我在杭州做财务，身份证号 330106199205183420。", "330106199205183420"),
    # Named a card's, a number is one even with a wrong check digit.
    ("Check this before I pay? Card number 4929 3318 0254 7716, expiry 08/27.", "0254 7716"),
]


def _stored_text() -> list[str]:
    return [
        *Memory.objects.values_list("content", flat=True),
        *Message.objects.values_list("content", flat=True),
    ]


def _assert_nothing_kept(secret: str) -> None:
    leaks = [text for text in _stored_text() if secret in text]
    assert not leaks, leaks


@pytest.mark.django_db
@pytest.mark.parametrize(("said", "secret"), KEYWORDLESS)
def test_extraction_remember_api_and_page_keep_no_keywordless_secret(
    alice: Any, said: str, secret: str
) -> None:
    api = ApiClient(alice)
    conversation = api.post("/conversations", {"external_id": "chat"}).json()["id"]
    message = {"external_id": "m1", "role": "user", "content": said}
    api.post(f"/conversations/{conversation}/messages", {"messages": [message]})
    assert api.post(f"/conversations/{conversation}/end").status_code == 202
    for response in (
        api.post("/commands", {"command": f"/remember {said}"}),
        api.post("/memories", {"content": said}),
    ):
        assert response.status_code in (200, 201, 422), response.content
    client_for(alice).post(
        "/settings/memories/add", {"content": said, "kind": "", "where": "personal"}
    )
    _assert_nothing_kept(secret)


@pytest.fixture
def live_server_url() -> Iterator[str]:
    from tests.live_asgi import live_asgi_server

    with live_asgi_server() as url:
        yield url


@pytest.mark.django_db(transaction=True)
def test_import_mcp_and_the_proxy_keep_no_keywordless_secret(
    alice: Any, live_server_url: str, settings: Any, tmp_path: Any
) -> None:
    import openai

    from accounts.models import ApiToken
    from tests.api.test_mcp import with_session
    from tests.live_asgi import FakeUpstream

    settings.IMPORTS_DIR = str(tmp_path / "imports")
    saved = "\n".join(f"- {said}" for said, _secret in KEYWORDLESS)
    job = imports.create_import(owner=alice, source="memories", text=saved)
    job.refresh_from_db()
    imports.start_import(job, keep_conversations=True, build_memories=True)
    secret_token = ApiToken.issue(user=alice, name="agent")[1]

    async def steps(session: Any) -> None:
        for said, _secret in KEYWORDLESS:
            await session.call_tool("add_memory", {"content": said})
            await session.call_tool("remember", {"text": said})

    with_session(live_server_url, secret_token, steps)
    with FakeUpstream() as upstream:
        settings.MEMORY_PROXY_UPSTREAM_URL = upstream.url
        chat = openai.OpenAI(base_url=f"{live_server_url}/v1", api_key=secret_token, max_retries=0)
        for said, _secret in KEYWORDLESS:
            chat.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": said}]
            )
            chat.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": f"/remember {said}"}]
            )
    for _said, secret in KEYWORDLESS:
        _assert_nothing_kept(secret)
