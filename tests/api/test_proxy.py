"""The OpenAI-compatible memory proxy, through the openai SDK against a live uvicorn server
with a fake upstream model server that records what it got."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest

from accounts.models import ApiToken, MemorySettings
from conversations.models import Conversation, ExtractionRun
from memories.models import Memory
from tests.live_asgi import FakeUpstream, live_asgi_server
from tests.recall_helpers import remember

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def upstream(settings: Any) -> Iterator[FakeUpstream]:
    with FakeUpstream() as fake:
        settings.MEMORY_PROXY_UPSTREAM_URL = fake.url
        settings.MEMORY_PROXY_UPSTREAM_API_KEY = "sk-upstream"
        settings.MEMORY_PROXY_MODEL_MAP = "gpt-4o=llama3"
        yield fake


@pytest.fixture
def server(upstream: FakeUpstream) -> Iterator[str]:
    with live_asgi_server() as url:
        yield url


def client(server: str, user: Any, **headers: str) -> openai.OpenAI:
    secret = ApiToken.issue(user=user, name="Open WebUI")[1]
    return openai.OpenAI(
        base_url=f"{server}/v1", api_key=secret, max_retries=0, default_headers=headers
    )


def wait_for(check: Any, seconds: float = 10) -> Any:
    """Storage happens after the answer is sent: wait for it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    return check()


def system_sent(upstream: FakeUpstream) -> str:
    messages = upstream.requests[-1]["body"]["messages"]
    assert messages[0]["role"] == "system"
    return str(messages[0]["content"])


def test_memory_block_added_and_answer_unchanged(server, upstream, alice):
    remember(alice, "Prefers tabs over spaces in Python code")

    answer = client(server, alice).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "How should I indent Python code?"}]
    )

    assert answer.id == "chatcmpl-upstream"
    assert answer.choices[0].message.content == "Sure, tabs it is."
    assert answer.usage.total_tokens == 10
    sent = upstream.requests[-1]
    assert sent["body"]["model"] == "llama3"  # MEMORY_PROXY_MODEL_MAP
    assert sent["headers"]["Authorization"] == "Bearer sk-upstream"
    assert "Prefers tabs over spaces in Python code" in system_sent(upstream)
    assert sent["body"]["messages"][1] == {
        "role": "user",
        "content": "How should I indent Python code?",
    }


def test_block_joins_an_existing_system_message(server, upstream, alice):
    remember(alice, "Prefers tabs over spaces in Python code")
    client(server, alice).chat.completions.create(
        model="other",
        messages=[
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Tabs or spaces for Python code?"},
        ],
        temperature=0.2,
    )
    sent = upstream.requests[-1]["body"]
    assert sent["model"] == "other" and sent["temperature"] == 0.2
    assert len(sent["messages"]) == 2
    assert system_sent(upstream).startswith("You are terse.\n\n")
    assert "Prefers tabs over spaces" in system_sent(upstream)


def test_streamed_answer_and_the_conversation_stored_and_extracted(
    server, upstream, alice, settings
):
    settings.EXTRACTION_EVERY_USER_TURNS = 1
    chat = client(server, alice, **{"X-Memory-Conversation": "webui-42"})

    stream = chat.chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": "I always use tabs for indentation"}],
        stream=True,
    )
    chunks = list(stream)

    assert [c.choices[0].delta.content for c in chunks] == ["", "Sure, ", "tabs it is.", None]
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert upstream.requests[-1]["body"]["stream"] is True
    conversation = wait_for(lambda: Conversation.objects.filter(external_id="webui-42").first())
    assert conversation is not None and conversation.client == "openai-proxy"
    wait_for(lambda: conversation.messages.count() == 2)
    assert list(conversation.messages.order_by("position").values_list("role", "content")) == [
        ("user", "I always use tabs for indentation"),
        ("assistant", "Sure, tabs it is."),
    ]
    run = wait_for(lambda: ExtractionRun.objects.filter(conversation=conversation).first())
    assert run is not None
    assert wait_for(lambda: Memory.objects.filter(owner=alice, content__icontains="tabs").exists())


def test_one_conversation_per_client_per_day_and_user_field(server, upstream, alice):
    chat = client(server, alice)
    for text in ("hello", "again"):
        chat.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": text}])
    chat.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}], user="thread-7"
    )
    wait_for(lambda: Conversation.objects.filter(owner=alice).count() == 2)
    daily = Conversation.objects.exclude(external_id="thread-7").get()
    assert daily.external_id.startswith("openai-proxy-")
    wait_for(lambda: daily.messages.count() == 4)
    assert daily.messages.filter(role="user").count() == 2


def test_tool_calls_pass_through(server, upstream, alice):
    upstream.body = {
        "id": "chatcmpl-tools",
        "object": "chat.completion",
        "created": 1,
        "model": "llama3",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "system_fingerprint": "fp_x",
    }
    tools: list[Any] = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    answer = client(server, alice).chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
        tools=tools,
        tool_choice="auto",
    )
    assert answer.choices[0].finish_reason == "tool_calls"
    call = answer.choices[0].message.tool_calls[0]
    assert (call.id, call.function.name, call.function.arguments) == (
        "call_1",
        "get_weather",
        '{"city": "Oslo"}',
    )
    assert answer.system_fingerprint == "fp_x"
    assert upstream.requests[-1]["body"]["tools"] == tools
    assert upstream.requests[-1]["body"]["tool_choice"] == "auto"


def test_upstream_error_keeps_its_status_in_openai_shape(server, upstream, alice):
    upstream.status = 500
    with pytest.raises(openai.InternalServerError) as raised:
        client(server, alice).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
        )
    assert raised.value.status_code == 500
    assert raised.value.body["code"] == "UPSTREAM_ERROR"
    assert "boom" in raised.value.body["message"]

    upstream.status = 429
    upstream.body = json.dumps({"error": {"message": "slow down", "type": "rate", "code": "x"}})
    with pytest.raises(openai.RateLimitError) as limited:
        client(server, alice).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
        )
    assert limited.value.body == {"message": "slow down", "type": "rate", "code": "x"}


def test_upstream_timeout_is_504(server, upstream, alice, settings):
    settings.MEMORY_PROXY_TIMEOUT = 0.3
    upstream.delay = 1.5
    with pytest.raises(openai.APIStatusError) as raised:
        client(server, alice).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
        )
    assert raised.value.status_code == 504
    assert raised.value.body["code"] == "UPSTREAM_TIMEOUT"


def test_slash_command_answered_locally(server, upstream, alice):
    chat = client(server, alice)

    answer = chat.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "/remember I prefer tabs"}]
    )
    streamed = chat.chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": "/forget tabs"}],
        stream=True,
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in streamed)

    assert answer.object == "chat.completion"
    assert answer.choices[0].message.content == "Remembered: “I prefer tabs”."
    assert text.startswith("Forgot 1 memory:")
    assert upstream.requests == []
    assert not Memory.objects.alive().exists()
    assert not Conversation.objects.exists()


def test_temporary_and_memory_off_skip_injection_and_storage(server, upstream, alice):
    remember(alice, "Prefers tabs over spaces in Python code")
    temporary = client(server, alice, **{"X-Memory-Temporary": "true"})
    temporary.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "Tabs for Python code?"}]
    )
    assert upstream.requests[-1]["body"]["messages"][0]["role"] == "user"

    MemorySettings.objects.filter(user=alice).update(memory_enabled=False)
    client(server, alice).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "Tabs for Python code?"}]
    )
    assert upstream.requests[-1]["body"]["messages"][0]["role"] == "user"
    time.sleep(0.3)
    assert not Conversation.objects.exists()


def test_privacy_pause_recalls_and_stores_nothing(server, upstream, alice):
    remember(alice, "Prefers tabs over spaces in Python code")
    MemorySettings.for_user(alice).pause(None)
    client(server, alice).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "Tabs for Python code?"}]
    )
    assert upstream.requests[-1]["body"]["messages"][0]["role"] == "user"
    time.sleep(0.3)
    assert not Conversation.objects.exists()


def test_project_limited_token_stores_in_its_project_never_a_personal_chat(
    server, upstream, alice, project
):
    """Issue 42, item 1: the store step applies the token's limit."""
    diary = Conversation.objects.create(owner=alice, external_id="diary")
    secret = ApiToken.issue(user=alice, name="Team bot", limit="project", limit_project=project)[1]
    for headers in ({"X-Memory-Conversation": "diary"}, {}):
        chat = openai.OpenAI(
            base_url=f"{server}/v1", api_key=secret, max_retries=0, default_headers=headers
        )
        chat.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "I moved to Lyon"}]
        )
    stored = wait_for(lambda: Conversation.objects.filter(project=project).first())
    assert stored is not None and stored.external_id.startswith("openai-proxy-")
    assert wait_for(lambda: stored.messages.count() == 2)
    time.sleep(0.3)
    assert not diary.messages.exists()
    assert list(Conversation.objects.values_list("external_id", flat=True).order_by("pk")) == [
        "diary",
        stored.external_id,
    ]


def test_slash_command_answered_in_the_callers_language(server, upstream, alice):
    chat = client(server, alice, **{"Accept-Language": "zh-CN,zh;q=0.9"})
    answer = chat.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "/remember I prefer tabs"}]
    )
    assert answer.choices[0].message.content == "已记住：“I prefer tabs”。"


def test_bad_token_and_bad_body(server, upstream, alice):
    bad = openai.OpenAI(base_url=f"{server}/v1", api_key="mem_wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as raised:
        bad.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.body["code"] == "UNAUTHORIZED"

    secret = ApiToken.issue(user=alice, name="curl")[1]
    response = httpx2.post(
        f"{server}/v1/chat/completions",
        json={"model": "gpt-4o"},
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert upstream.requests == []


def test_deeply_nested_json_is_a_validation_error_in_openai_shape(server, upstream, alice):
    secret = ApiToken.issue(user=alice, name="curl")[1]
    for depth in (100, 100_000):
        response = httpx2.post(
            f"{server}/v1/chat/completions",
            content="[" * depth + "]" * depth,
            headers={"Authorization": f"Bearer {secret}", "Content-Type": "application/json"},
        )
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert upstream.requests == []


def test_a_body_over_the_limit_is_413_and_not_forwarded(server, upstream, alice, settings):
    """Issue 42, item 8: 40 MB were taken and forwarded."""
    settings.MEMORY_PROXY_MAX_BODY_BYTES = 100_000
    secret = ApiToken.issue(user=alice, name="curl")[1]
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "x" * 200_000}]}
    headers = {"Authorization": f"Bearer {secret}"}
    sized = httpx2.post(f"{server}/v1/chat/completions", json=body, headers=headers)
    chunked = httpx2.post(
        f"{server}/v1/chat/completions",
        content=iter([json.dumps(body).encode()]),
        headers={**headers, "Content-Type": "application/json"},
    )
    for response in (sized, chunked):
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert upstream.requests == []


def test_control_characters_are_passed_on_and_stored_without_them(server, upstream, alice):
    """Issue 42, item 9: a NUL in the chat left the turn silently not stored."""
    chat = client(server, alice, **{"X-Memory-Conversation": "pasted"})
    chat.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "My build log:\u0000 \x1b[31mfailed"}]
    )
    assert upstream.requests[-1]["body"]["messages"][-1]["content"].startswith(
        "My build log:\u0000"
    )
    conversation = wait_for(lambda: Conversation.objects.filter(external_id="pasted").first())
    assert conversation is not None
    assert wait_for(lambda: conversation.messages.filter(role="user").exists())
    stored = conversation.messages.get(role="user").content
    assert stored == "My build log: [31mfailed"


def test_models_lists_upstream_models_and_mapped_names(server, upstream, alice):
    models = client(server, alice).models.list()
    assert [model.id for model in models.data] == ["llama3", "gpt-4o"]


def test_the_answer_passes_byte_for_byte_unknown_fields_included(server, upstream, alice):
    upstream.body = {
        "id": "chatcmpl-vendor",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}}],
        "x_vendor": {"reasoning": "…", "cost": 0.001},
    }

    secret = ApiToken.issue(user=alice, name="curl")[1]
    response = httpx2.post(
        f"{server}/v1/chat/completions",
        json={"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": f"Bearer {secret}"},
    )

    assert response.status_code == 200
    assert response.content == json.dumps(upstream.body).encode()
    assert response.headers["content-type"] == "application/json"


def test_streamed_events_pass_unchanged_as_they_come(server, upstream, alice):
    upstream.delay = 0.4  # between events: five events take 2 s to send
    secret = ApiToken.issue(user=alice, name="curl")[1]
    body = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    arrivals: list[float] = []
    received = b""
    started = time.perf_counter()
    with httpx2.stream(
        "POST",
        f"{server}/v1/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {secret}"},
        timeout=10,
    ) as response:
        for chunk in response.iter_raw():
            arrivals.append(time.perf_counter() - started)
            received += chunk

    expected = b"".join(
        f"data: {event}\n\n".encode() for event in upstream.events({**body, "model": "llama3"})
    )
    assert received == expected
    assert response.headers["content-type"].startswith("text/event-stream")
    assert arrivals[0] < 1.0 < arrivals[-1]  # the first event long before the last


def test_no_upstream_key_no_authorization(server, upstream, alice, settings):
    settings.MEMORY_PROXY_UPSTREAM_API_KEY = ""
    client(server, alice).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
    )
    assert "Authorization" not in upstream.requests[-1]["headers"]
    assert upstream.requests[-1]["headers"]["Accept-Encoding"] == "identity"


def test_upstream_unreachable_502_and_none_503(server, upstream, alice, settings):
    settings.MEMORY_PROXY_UPSTREAM_URL = "http://127.0.0.1:9/v1"
    with pytest.raises(openai.APIStatusError) as raised:
        client(server, alice).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
        )
    assert raised.value.status_code == 502
    assert raised.value.body["code"] == "UPSTREAM_UNAVAILABLE"

    settings.MEMORY_PROXY_UPSTREAM_URL = ""
    with pytest.raises(openai.APIStatusError) as raised:
        client(server, alice).models.list()
    assert raised.value.status_code == 503
    assert raised.value.body["code"] == "PROXY_NOT_CONFIGURED"
