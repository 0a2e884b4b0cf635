"""The API's contract: strict bodies and types, limits refused with a message, JSON errors
for every status, and every status it answers listed in the OpenAPI document."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memories.models import Memory
from tests.recall_helpers import ApiClient

pytestmark = pytest.mark.django_db


def code(response: Any) -> str:
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    return str(response.json()["error"]["code"])


def test_unknown_body_fields_are_refused(alice: Any) -> None:
    api = ApiClient(alice)
    response = api.post("/memories", {"content": "Likes tea", "contnet": "typo"})
    assert response.status_code == 400 and code(response) == "VALIDATION_ERROR"
    assert "contnet" in json.dumps(response.json())
    response = api.post("/conversations", {"external_id": "c1", "titel": "x"})
    assert response.status_code == 400
    assert not Memory.objects.exists()


def test_json_sent_as_plain_text_is_refused(alice: Any) -> None:
    api = ApiClient(alice)
    response = api.client.post(
        "/api/v1/memories", data=json.dumps({"content": "Likes tea"}), content_type="text/plain"
    )
    assert response.status_code == 415 and code(response) == "UNSUPPORTED_MEDIA_TYPE"
    assert not Memory.objects.exists()


@pytest.mark.parametrize("value", ["yes", "true", 1, "1", "on"])
def test_booleans_are_strict(alice: Any, value: Any) -> None:
    response = ApiClient(alice).post("/memories", {"content": "Likes tea", "pinned": value})
    assert response.status_code == 400 and code(response) == "VALIDATION_ERROR"


@pytest.mark.parametrize("value", ["-1", "0", "1700000000", "1.5"])
def test_dates_must_be_iso_text(alice: Any, value: str) -> None:
    response = ApiClient(alice).get("/memories", {"created_before": value})
    assert response.status_code == 400 and code(response) == "VALIDATION_ERROR"


def test_an_over_long_tag_is_refused_not_cut(alice: Any) -> None:
    response = ApiClient(alice).post("/memories", {"content": "Likes tea", "tags": ["x" * 51]})
    assert response.status_code == 400 and code(response) == "VALIDATION_ERROR"
    assert "50 characters" in json.dumps(response.json())
    ok = ApiClient(alice).post("/memories", {"content": "Likes tea", "tags": ["x" * 50]})
    assert ok.status_code == 201 and ok.json()["tags"] == ["x" * 50]


def test_errors_are_json_for_405_and_long_urls(alice: Any) -> None:
    api = ApiClient(alice)
    assert code(api.client.put("/api/v1/memories")) == "METHOD_NOT_ALLOWED"
    response = api.get("/memories/" + "9" * 5000)
    assert response.status_code in (400, 404) and code(response)


def test_every_operation_documents_the_error_statuses(alice: Any) -> None:
    schema = ApiClient(alice).get("/openapi.json").json()
    assert "ErrorOut" in schema["components"]["schemas"]
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            statuses = set(operation["responses"])
            expected = {"400", "401", "403", "404", "405", "413", "415", "429", "500", "503"}
            assert expected <= statuses, (method, path, expected - statuses)
    memory_post = schema["paths"]["/api/v1/memories"]["post"]["responses"]
    assert {"201", "409", "422"} <= set(memory_post)
    tags = schema["components"]["schemas"]["MemoryIn"]["properties"]["tags"]
    assert tags["items"]["maxLength"] == 50


def test_the_openapi_document_has_no_duplicate_keys(alice: Any) -> None:
    """Swagger UI (/api/v1/docs) refuses a document with a status listed twice."""

    def refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _value in pairs]
        assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
        return dict(pairs)

    raw = ApiClient(alice).get("/openapi.json").content
    json.loads(raw, object_pairs_hook=refuse_duplicates)


def test_answers_are_written_as_djangos_encoder_writes_them(alice: Any) -> None:
    """api.renderers writes with orjson; what a client reads is unchanged."""
    from datetime import UTC, date, datetime
    from decimal import Decimal

    from ninja.responses import NinjaJSONEncoder

    from api.renderers import FastJSONRenderer

    data = {
        "sent_at": datetime(2026, 11, 27, 10, 0, 0, 123456, tzinfo=UTC),
        "day": date(2026, 11, 27),
        "score": 0.265225,
        "tiny": 1e-05,
        "amount": Decimal("1.50"),
        "text": "Docker 构建需要使用 proxy-env 代理",
        "by_id": {7: "seven"},
        "items": [None, True, (1, 2)],
    }
    written = FastJSONRenderer().render(None, data, response_status=200)  # type: ignore[arg-type]
    assert json.loads(written) == json.loads(json.dumps(data, cls=NinjaJSONEncoder))
    assert b'"sent_at":"2026-11-27T10:00:00.123Z"' in written

    memory = Memory.objects.create(owner=alice, kind="fact", content="周五部署")
    answer = ApiClient(alice).get(f"/memories/{memory.pk}")
    assert answer.json()["content"] == "周五部署"
    assert answer["Content-Type"] == "application/json; charset=utf-8"
