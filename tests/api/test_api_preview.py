from __future__ import annotations

import pytest

from conversations.models import Conversation
from memories.models import Memory, Scope
from recall.models import AccessLog
from tests.recall_helpers import ApiClient, error_code, remember

pytestmark = pytest.mark.django_db


def test_preview_through_the_api(alice, project):
    remember(alice, "Prefers concise answers", kind="preference", pinned=True)
    remember(alice, "Survey data lives in PostGIS", scope=Scope.PROJECT, project=project)
    api = ApiClient(alice)

    response = api.post(
        "/injection-preview",
        {
            "message": "Where is the survey data?",
            "recent_messages": ["hi", "let's talk about the survey"],
            "project": project.slug,
            "client": "railwise-cli",
        },
    )

    assert response.status_code == 200
    body = response.json()
    assert body["block"] == (
        "## Memory\n\n### About the user\n- Prefers concise answers\n"
        "\n### Project knowledge\n- Survey data lives in PostGIS\n"
    )
    assert [m["pinned"] for m in body["memories"]] == [True, False]
    assert body["tokens"]["user"] > 0 and body["tokens"]["project"] > 0
    assert body["budget"] == {"total": 2000, "user": 600, "project": 800, "conversation": 600}
    assert set(body["timing_ms"]) == {
        "context_ms",
        "search_ms",
        "ranking_ms",
        "episodes_ms",
        "total_ms",
    }
    assert body["timing_ms"]["total_ms"] > 0
    assert response["Server-Timing"].startswith("recall;dur=")
    log = AccessLog.objects.get()
    assert log.api_token == api.token and log.client == "railwise-cli"


def test_preview_with_a_conversation_id_and_budgets(alice):
    chat = Conversation.objects.create(owner=alice, external_id="ext-42")
    remember(alice, "We picked option B for the API", scope=Scope.CONVERSATION, conversation=chat)
    api = ApiClient(alice)

    body = api.post(
        "/injection-preview",
        {
            "message": "remind me which option",
            "conversation_id": "ext-42",
            "budgets": {"conversation": 1},
            "dry_run": True,
            "format": "xml",
        },
    ).json()

    assert body["memories"] == []
    assert [d["reason"] for d in body["dropped"]] == ["scope_budget"]
    assert body["budget"]["conversation"] == 1
    assert Memory.objects.get().access_count == 0


def test_preview_input_is_validated(alice):
    api = ApiClient(alice)

    assert error_code(api.post("/injection-preview", {})) == "VALIDATION_ERROR"
    assert error_code(api.post("/injection-preview", {"message": "x", "format": "yaml"})) == (
        "VALIDATION_ERROR"
    )
    assert error_code(api.post("/injection-preview", {"message": "x", "budget": -1})) == (
        "VALIDATION_ERROR"
    )


def test_memory_off_through_the_api(alice):
    from accounts.models import MemorySettings

    MemorySettings.objects.filter(user=alice).update(memory_enabled=False)

    body = ApiClient(alice).post("/injection-preview", {"message": "anything"}).json()

    assert body["enabled"] is False and body["block"] == "" and body["reason"] == "memory_disabled"


def test_preview_runs_a_small_constant_number_of_queries(alice, project):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    api = ApiClient(alice)
    body = {"message": "what about the survey data", "project": project.slug}

    def queries_of_one_preview() -> list[str]:
        with CaptureQueriesContext(connection) as captured:
            assert api.post("/injection-preview", body).status_code == 200
        return [query["sql"] for query in captured.captured_queries]

    remember(alice, "Survey data lives in PostGIS", pinned=True)
    queries_of_one_preview()  # reads (and caches) the term statistics once
    few = queries_of_one_preview()
    for n in range(20):
        remember(alice, f"Survey note {n}", scope=Scope.PROJECT, project=project)
    many = queries_of_one_preview()

    # The memories found and the pinned ones come in the search's own statement, however many.
    assert len(few) == len(many) <= 13
    assert sum("WITH keyword" in sql for sql in many) == 2  # memories, past turns
    # Use counts are one statement and the access log one INSERT, whatever was injected.
    assert sum("SET access_count" in sql for sql in many) == 1
    assert sum(sql.startswith('INSERT INTO "memoryapp_accesslog"') for sql in many) == 1
