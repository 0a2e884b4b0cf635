"""Text PostgreSQL cannot store (NUL) or nobody meant to send (control characters), and
dates it cannot read (offsets of 16 hours or more), are refused clearly, never a 500."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from conversations.models import Conversation
from memories.memory_files import parse_files, read_uploads
from memories.models import Memory
from tests.conftest import client_for
from tests.recall_helpers import ApiClient

pytestmark = pytest.mark.django_db

NUL = "\u0000"


def assert_validation_error(response: Any) -> None:
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize("bad", [NUL, "\x07", "\x1b[31m", "\x7f"])
@pytest.mark.parametrize(
    "path,body",
    [
        ("/memories", {"content": "Likes tea{}"}),
        ("/memories", {"content": "Likes tea", "tags": ["a{}"]}),
        ("/memories", {"content": "Likes tea", "scope": "project", "project": "x{}"}),
        ("/memories", {"content": "Likes tea", "conversation_id": "c{}"}),
        ("/commands", {"command": "/remember I like tea{}"}),
        ("/conversations", {"external_id": "c{}"}),
        ("/conversations", {"external_id": "c1", "title": "t{}"}),
        ("/injection-preview", {"message": "tea{}"}),
    ],
)
def test_control_characters_in_bodies_are_refused(
    alice: Any, path: str, body: dict[str, Any], bad: str
) -> None:
    filled = {
        key: (
            value.replace("{}", bad)
            if isinstance(value, str)
            else [item.replace("{}", bad) for item in value]
            if isinstance(value, list)
            else value
        )
        for key, value in body.items()
    }
    assert_validation_error(ApiClient(alice).post(path, filled))
    assert not Memory.objects.exists()


def test_control_characters_in_messages_and_summaries_are_refused(alice: Any) -> None:
    api = ApiClient(alice)
    conversation = api.post("/conversations", {"external_id": "c1"}).json()["id"]
    message = {"external_id": "m1", "role": "user", "content": f"hello{NUL}"}
    response = api.post(f"/conversations/{conversation}/messages", {"messages": [message]})
    assert_validation_error(response)
    assert response.json()["error"]["details"]["fields"][0]["field"] == "messages.0.content"
    message = {"external_id": "m1", "role": "user", "content": "hi", "speaker": f"A{NUL}"}
    response = api.post(f"/conversations/{conversation}/messages", {"messages": [message]})
    assert_validation_error(response)
    response = api.post(f"/conversations/{conversation}/summary", {"summary": f"## Goal{NUL}"})
    assert_validation_error(response)


def test_tabs_and_newlines_are_fine(alice: Any) -> None:
    response = ApiClient(alice).post("/memories", {"content": "Line one\n\tLine two\r\n"})
    assert response.status_code == 201


@pytest.mark.parametrize(
    "path", ["/memories", "/memories/search?q=tea", "/memories?state=all", "/memories/stats"]
)
@pytest.mark.parametrize("param", ["tag", "project", "kind", "cursor", "q"])
def test_control_characters_in_query_parameters_are_refused(
    alice: Any, path: str, param: str
) -> None:
    separator = "&" if "?" in path else "?"
    response = ApiClient(alice).client.get(f"/api/v1{path}{separator}{param}=a%00b")
    assert_validation_error(response)


@pytest.mark.parametrize(
    "when", ["2024-01-01T00:00:00+16:00", "2024-01-01T00:00:00-23:59", "2024-01-01T00:00:00+99:00"]
)
def test_offsets_of_sixteen_hours_or_more_are_refused(alice: Any, when: str) -> None:
    api = ApiClient(alice)
    assert_validation_error(api.get("/memories", {"created_after": when}))
    assert_validation_error(api.get("/memories/search", {"q": "tea", "as_of": when}))
    assert_validation_error(api.post("/injection-preview", {"message": "tea", "as_of": when}))
    conversation = api.post("/conversations", {"external_id": "c1"}).json()["id"]
    message = {"external_id": "m1", "role": "user", "content": "hi", "sent_at": when}
    assert_validation_error(
        api.post(f"/conversations/{conversation}/messages", {"messages": [message]})
    )
    assert api.get("/memories", {"created_after": "2024-01-01T00:00:00+14:00"}).status_code == 200


def test_pages_refuse_control_characters_with_a_form_error(alice: Any) -> None:
    client = client_for(alice)
    for bad in (NUL, "\x07"):
        response = client.post(
            "/settings/memories/add",
            {"content": f"Likes tea{bad}", "kind": "fact", "where": "personal"},
        )
        assert response.status_code in (200, 400)
        assert "control characters" in response.content.decode()
    assert not Memory.objects.exists()


@pytest.mark.parametrize("param", ["q", "tag", "created_after", "scope", "kind"])
def test_page_filters_with_nul_do_not_break_the_page(alice: Any, param: str) -> None:
    response = client_for(alice).get(f"/settings/memories?{param}=a%00b")
    assert response.status_code in (200, 400)


def test_an_imported_file_with_control_characters_gets_its_own_error() -> None:
    upload = SimpleUploadedFile("facts.md", b"- Likes tea\x00\n- Likes coffee\n")
    good = SimpleUploadedFile("lessons.md", b"- Test first\n")
    files, problems = read_uploads([upload, good])
    assert list(files) == ["lessons.md"]
    assert [str(problem) for problem in problems] == [
        "facts.md, line 1: control characters (such as NUL) are not allowed."
    ]
    assert len(parse_files(files).items) == 1


def test_conversation_is_not_created_with_nul(alice: Any) -> None:
    ApiClient(alice).post("/conversations", {"external_id": f"c{NUL}"})
    assert not Conversation.objects.exists()


@pytest.mark.parametrize("depth", [100, 1000, 100_000])
def test_deeply_nested_json_is_a_validation_error(alice: Any, depth: int) -> None:
    """Issue 42, item 3: was a RecursionError (500) in the request checks."""
    client = ApiClient(alice).client
    for path in ("/api/v1/memories", "/api/v1/injection-preview"):
        response = client.post(path, "[" * depth + "]" * depth, content_type="application/json")
        assert_validation_error(response)


@pytest.mark.parametrize(
    "path,body",
    [
        ("/memories", {"content": "Likes tea", "confidence": False}),
        ("/memories", {"content": "Likes tea", "importance": True}),
        ("/memories", {"content": "Likes tea", "confidence": "0.5"}),
        ("/injection-preview", {"message": "tea?", "min_score": True}),
        ("/injection-preview", {"message": "tea?", "min_score": "0.5"}),
        ("/injection-preview", {"message": "tea?", "limit": True}),
    ],
)
def test_numbers_must_be_json_numbers(alice: Any, path: str, body: dict[str, Any]) -> None:
    """Issue 42, item 11: "confidence": false was stored as 0.0."""
    assert_validation_error(ApiClient(alice).post(path, body))
    assert not Memory.objects.exists()


def test_the_openapi_document_states_the_text_kind_and_cursor_rules(alice: Any) -> None:
    schema = ApiClient(alice).get("/openapi.json").json()
    memory_in = schema["components"]["schemas"]["MemoryIn"]["properties"]
    assert "fact" in memory_in["kind"]["enum"] and "preference" in memory_in["kind"]["enum"]
    assert memory_in["content"]["pattern"].startswith("^[^\\x00")
    assert memory_in["confidence"]["maximum"] == 1
    parameters = {
        parameter["name"]: parameter["schema"]
        for parameter in schema["paths"]["/api/v1/memories"]["get"]["parameters"]
    }
    assert parameters["cursor"]["anyOf"][0]["pattern"] == "^[A-Za-z0-9_-]+$"
    assert "preference" in parameters["kind"]["anyOf"][0]["enum"]
    assert ApiClient(alice).get("/memories", {"cursor": "not a cursor!"}).status_code == 400
