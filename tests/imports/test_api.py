"""POST /api/v1/imports with the file, GET /api/v1/imports/{id} for progress; stable errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from accounts.models import ApiToken, MemorySettings, TokenLimit
from conversations.models import Conversation
from imports.models import Import
from memories.models import Memory
from tests.imports.helpers import CHATGPT_JSON, CLAUDE_JSON, DATA, chatgpt_zip, upload

pytestmark = pytest.mark.django_db(transaction=True)


def api(user: Any, **token: Any) -> Client:
    _token, secret = ApiToken.issue(user=user, name="importer", **token)
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def error_code(response: Any) -> str:
    return str(response.json()["error"]["code"])


def test_an_export_is_imported_and_its_progress_read(alice: Any) -> None:
    client = api(alice)
    response = client.post("/api/v1/imports", {"source": "chatgpt", "file": chatgpt_zip()})
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "done"  # Jobs run inline in tests; a worker does it in life.
    detail = client.get(f"/api/v1/imports/{body['id']}").json()
    assert detail["source"] == "chatgpt" and detail["file_name"] == "chatgpt-export.zip"
    assert detail["preview"]["new_conversations"] == 3
    assert detail["progress"] == {
        "read": {
            "done": detail["progress"]["read"]["total"],
            "total": detail["progress"]["read"]["total"],
        },
        "stored": {"done": 7, "total": 7},
        "extracted": {"done": 7, "total": 7},
    }
    assert detail["result"]["conversations_stored"] == 3
    assert detail["result"]["memories_created"] == 3
    assert detail["error"] is None
    assert [item["id"] for item in client.get("/api/v1/imports").json()] == [body["id"]]


def test_a_preview_first_then_the_choice(alice: Any) -> None:
    client = api(alice)
    body = client.post(
        "/api/v1/imports", {"source": "claude", "file": upload(CLAUDE_JSON), "start": "false"}
    ).json()
    assert body["status"] == "ready" and body["preview"]["new_messages"] == 5
    assert not Conversation.objects.exists()
    started = client.post(
        f"/api/v1/imports/{body['id']}/start",
        json.dumps({"keep_conversations": True, "build_memories": False}),
        content_type="application/json",
    )
    assert started.status_code == 202
    assert started.json()["status"] == "done"
    assert started.json()["progress"]["indexed"] == {"done": 5, "total": 5}
    assert Conversation.objects.count() == 2 and not Memory.objects.exists()


def test_undo_and_discard(alice: Any) -> None:
    client = api(alice)
    body = client.post("/api/v1/imports", {"source": "claude", "file": upload(CLAUDE_JSON)}).json()
    deleted = client.delete(f"/api/v1/imports/{body['id']}")
    assert (deleted.status_code, error_code(deleted)) == (409, "CONFLICT")
    undone = client.post(f"/api/v1/imports/{body['id']}/undo", content_type="application/json")
    assert undone.status_code == 202
    assert undone.json()["status"] == "undone"
    assert undone.json()["result"]["conversations_undone"] == 2
    assert not Conversation.objects.exists()
    again = client.post(f"/api/v1/imports/{body['id']}/undo", content_type="application/json")
    assert (again.status_code, error_code(again)) == (409, "CONFLICT")
    assert client.delete(f"/api/v1/imports/{body['id']}").status_code == 204
    assert not Import.objects.exists()


def test_a_file_that_cannot_be_imported_reports_a_stable_code(alice: Any) -> None:
    client = api(alice)
    body = client.post("/api/v1/imports", {"source": "chatgpt", "file": upload(CLAUDE_JSON)}).json()
    assert body["status"] == "invalid"
    assert body["error"]["code"] == "WRONG_SERVICE"
    assert body["error"]["details"] == {"found": "claude"}
    assert "a Claude export" in body["error"]["message"]
    broken = upload(CHATGPT_JSON)
    broken.file.truncate(100)
    body = client.post("/api/v1/imports", {"source": "chatgpt", "file": broken}).json()
    assert (body["status"], body["error"]["code"]) == ("invalid", "MALFORMED_FILE")
    assert not Conversation.objects.exists()


def test_saved_memories_need_the_write_scope_and_memory_on(alice: Any) -> None:
    memories = DATA / "chatgpt_memories.txt"
    ingest_only = api(alice, scopes=["ingest"])
    refused = ingest_only.post("/api/v1/imports", {"source": "memories", "file": upload(memories)})
    assert (refused.status_code, error_code(refused)) == (403, "FORBIDDEN")
    client = api(alice)
    body = client.post(
        "/api/v1/imports", {"source": "memories", "text": "- Prefers green tea"}
    ).json()
    assert (body["status"], body["result"]["memories_created"]) == ("done", 1)
    MemorySettings.objects.filter(user=alice).update(memory_enabled=False)
    off = client.post("/api/v1/imports", {"source": "memories", "file": upload(memories)})
    assert (off.status_code, error_code(off)) == (409, "MEMORY_DISABLED")
    building = client.post("/api/v1/imports", {"source": "claude", "file": upload(CLAUDE_JSON)})
    assert (building.status_code, error_code(building)) == (409, "MEMORY_DISABLED")
    kept_only = client.post(
        "/api/v1/imports",
        {"source": "claude", "file": upload(CLAUDE_JSON), "build_memories": "false"},
    )
    assert kept_only.json()["status"] == "done"


@pytest.mark.parametrize(
    ("data", "code", "status"),
    [
        ({"source": "chatgpt"}, "VALIDATION_ERROR", 400),
        ({"source": "gemini", "file": "x"}, "VALIDATION_ERROR", 400),
        ({"source": "memories"}, "VALIDATION_ERROR", 400),
    ],
)
def test_bad_requests(alice: Any, data: dict[str, Any], code: str, status: int) -> None:
    if "file" in data:
        data = {**data, "file": upload(CLAUDE_JSON)}
    response = api(alice).post("/api/v1/imports", data)
    assert (response.status_code, error_code(response)) == (status, code)


def test_tokens_that_may_not_import(alice: Any, project: Any) -> None:
    read_only = api(alice, scopes=["read"])
    response = read_only.post("/api/v1/imports", {"source": "claude", "file": upload(CLAUDE_JSON)})
    assert (response.status_code, error_code(response)) == (403, "FORBIDDEN")
    limited = api(alice, limit=TokenLimit.PROJECT, limit_project=project)
    response = limited.post("/api/v1/imports", {"source": "claude", "file": upload(CLAUDE_JSON)})
    assert (response.status_code, error_code(response)) == (403, "FORBIDDEN")
    assert not Import.objects.exists()


def test_someone_elses_import_is_not_found(alice: Any, bob: Any) -> None:
    body = (
        api(alice).post("/api/v1/imports", {"source": "claude", "file": upload(CLAUDE_JSON)}).json()
    )
    response = api(bob).get(f"/api/v1/imports/{body['id']}")
    assert (response.status_code, error_code(response)) == (404, "NOT_FOUND")


def test_the_upload_limit_replaces_the_api_body_limit(alice: Any, settings: Any) -> None:
    settings.API_MAX_BODY_BYTES = 1000  # Smaller than the export: uploads are not bound by it.
    client = api(alice)
    response = client.post("/api/v1/imports", {"source": "claude", "file": upload(CLAUDE_JSON)})
    assert response.status_code == 202
    settings.IMPORT_MAX_BYTES = 1000
    response = client.post("/api/v1/imports", {"source": "claude", "file": upload(CLAUDE_JSON)})
    assert (response.status_code, error_code(response)) == (413, "PAYLOAD_TOO_LARGE")
    assert response.json()["error"]["details"] == {"limit": 1000}
    # Other endpoints still take JSON only, within API_MAX_BODY_BYTES.
    other = client.post("/api/v1/memories", {"content": "x", "file": upload(CLAUDE_JSON)})
    assert other.status_code in (413, 415)


def test_the_endpoints_are_in_the_openapi_document(alice: Any) -> None:
    from api import api as ninja_api

    schema = ninja_api.get_openapi_schema()
    assert {"/api/v1/imports", "/api/v1/imports/{import_id}"} <= set(schema["paths"])
    create = schema["paths"]["/api/v1/imports"]["post"]
    assert "multipart/form-data" in create["requestBody"]["content"]


def test_a_multipart_body_without_a_boundary_is_a_validation_error(alice: Any) -> None:
    """Found by scripts/api_fuzz.sh: MultiPartParserError was a 500."""
    response = api(alice).post("/api/v1/imports", b"--x\r\n", content_type="multipart/form-data")
    assert response.status_code == 400
    assert error_code(response) == "VALIDATION_ERROR"
