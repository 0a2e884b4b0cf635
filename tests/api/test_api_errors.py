"""Every error is JSON {"error": {"code", "message", "details"}} with a stable code."""

from __future__ import annotations

import json

import pytest
from django.test import Client, override_settings

from accounts.models import MemorySettings
from memories.models import Memory, Scope
from tests.conftest import client_for
from tests.recall_helpers import ApiClient, error_code, remember

pytestmark = pytest.mark.django_db


def assert_error(response, status, code):
    assert response.status_code == status
    body = response.json()
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    assert body["error"]["message"]


def test_validation_error_names_the_field(alice):
    api = ApiClient(alice)

    response = api.post("/memories", {"content": "x", "kind": "nonsense", "importance": 3})

    assert_error(response, 400, "VALIDATION_ERROR")
    fields = {item["field"] for item in response.json()["error"]["details"]["fields"]}
    assert fields == {"kind", "importance"}
    assert not Memory.objects.exists()


def test_invalid_json_body(alice):
    api = ApiClient(alice)

    response = api.client.post(
        "/api/v1/memories", data="{not json", content_type="application/json"
    )

    assert_error(response, 400, "VALIDATION_ERROR")


def test_unauthorized_without_or_with_a_bad_token(db):
    assert_error(Client().get("/api/v1/memories"), 401, "UNAUTHORIZED")
    bad = Client(headers={"Authorization": "Bearer mem_nope"})
    assert_error(bad.post("/api/v1/injection-preview", {}, "application/json"), 401, "UNAUTHORIZED")


def test_a_revoked_token_is_refused(alice):
    api = ApiClient(alice)
    api.token.revoke()

    assert_error(api.get("/memories"), 401, "UNAUTHORIZED")


def test_forbidden_for_a_viewer(alice, vera, project):
    memory = remember(alice, "Shared", scope=Scope.PROJECT, project=project)

    assert_error(ApiClient(vera).delete(f"/memories/{memory.pk}"), 403, "FORBIDDEN")


def test_not_found_for_unknown_memory_and_unknown_path(alice):
    api = ApiClient(alice)

    assert_error(api.get("/memories/999999"), 404, "NOT_FOUND")
    assert_error(api.get("/no/such/endpoint"), 404, "NOT_FOUND")
    assert_error(Client().get("/api/v1/nothing-here"), 404, "NOT_FOUND")


def test_wrong_method_is_json_405(alice):
    api = ApiClient(alice)

    response = api.client.put("/api/v1/injection-preview")

    assert_error(response, 405, "METHOD_NOT_ALLOWED")
    assert response.json()["error"]["details"]["allowed"] == ["POST"]
    assert response["Allow"] == "POST"


def test_conflict_on_a_stale_revision(alice):
    memory = remember(alice, "v1")
    api = ApiClient(alice)
    api.patch(f"/memories/{memory.pk}", {"revision": 1, "content": "v2"})

    assert_error(
        api.patch(f"/memories/{memory.pk}", {"revision": 1, "content": "v3"}), 409, "CONFLICT"
    )


def test_memory_disabled(alice):
    MemorySettings.objects.filter(user=alice).update(memory_enabled=False)

    assert_error(ApiClient(alice).post("/memories", {"content": "x"}), 409, "MEMORY_DISABLED")


@override_settings(API_MAX_BODY_BYTES=100)
def test_payload_too_large(alice):
    response = ApiClient(alice).post("/injection-preview", {"message": "x" * 200})

    assert_error(response, 413, "PAYLOAD_TOO_LARGE")


@override_settings(API_RATE_LIMIT="3/min")
def test_rate_limited_per_token(alice, bob):
    from django.core.cache import cache

    cache.clear()
    api = ApiClient(alice)
    assert [api.get("/me").status_code for _ in range(3)] == [200, 200, 200]

    response = api.get("/me")

    assert_error(response, 429, "RATE_LIMITED")
    assert int(response["Retry-After"]) > 0
    assert ApiClient(bob).get("/me").status_code == 200
    cache.clear()


@override_settings(MEMORY_EMBEDDING_DIMENSIONS=16)
def test_embedding_dimension_conflict(alice):
    response = ApiClient(alice).get("/embeddings")

    assert_error(response, 503, "EMBEDDING_DIMENSION_CONFLICT")
    details = response.json()["error"]["details"]
    assert details["command"] == "python manage.py embed_memories --rebuild"
    assert details == {
        "command": "python manage.py embed_memories --rebuild",
        "dimensions": 16,
        "stored_dimensions": 384,
    }


def test_embedding_status_when_all_is_well(alice):
    remember(alice, "embedded")

    body = ApiClient(alice).get("/embeddings").json()

    assert body["ok"] is True and body["missing"] == 0 and body["dimensions"] == 384


def test_session_writes_need_csrf(alice):
    client = client_for(alice)
    client.handler.enforce_csrf_checks = True

    response = client.post("/api/v1/memories", {"content": "x"}, content_type="application/json")

    assert response.status_code in (401, 403)
    assert error_code(response) in ("UNAUTHORIZED", "FORBIDDEN")
    assert not Memory.objects.exists()


def test_openapi_document_and_offline_docs_page(db):
    schema = Client().get("/api/v1/openapi.json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    for path in (
        "/api/v1/injection-preview",
        "/api/v1/memories",
        "/api/v1/memories/{memory_id}",
        "/api/v1/memories/{memory_id}/restore",
        "/api/v1/memories/{memory_id}/history",
        "/api/v1/memories/search",
        "/api/v1/memories/stats",
        "/api/v1/commands",
        "/api/v1/commands/undo",
    ):
        assert path in paths

    docs = Client().get("/api/v1/docs")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "/static/ninja/swagger-ui-bundle.js" in html
    assert "cdn." not in html


@pytest.mark.parametrize(
    ("status", "code"),
    [(409, "CONFLICT"), (429, "RATE_LIMITED"), (404, "NOT_FOUND"), (503, "SERVICE_UNAVAILABLE")],
)
def test_an_error_with_a_status_only_gets_the_generic_code_of_that_status(status, code):
    """Several codes share 409 (CONFLICT, MEMORY_DISABLED): a bare 409 is never "memory is off"."""
    from django.test import RequestFactory
    from ninja.errors import HttpError

    from api import api

    response = api.on_exception(RequestFactory().get("/api/v1/memories"), HttpError(status, "No."))
    assert response.status_code == status
    assert json.loads(response.content)["error"] == {"code": code, "message": "No.", "details": {}}


def test_a_post_without_a_valid_token_is_401_not_a_csrf_403(alice):
    """Clients outside a browser send no CSRF token: a bad or missing bearer token on a POST
    answered 403 (CSRF check failed) instead of the API's 401."""
    for headers in ({"Authorization": "Bearer mem_nope"}, {}):
        client = Client(enforce_csrf_checks=True, headers=headers)
        response = client.post("/api/v1/memories", {"content": "x"}, "application/json")
        assert_error(response, 401, "UNAUTHORIZED")
    signed_in = client_for(alice)
    signed_in.handler.enforce_csrf_checks = True
    forged = signed_in.post("/api/v1/memories", {"content": "x"}, "application/json")
    assert forged.status_code == 403
    assert not Memory.objects.exists()
