"""Partitioning by owner, on paper: every statement the main flows send that touches a user's
data names its owner, so a distributed PostgreSQL (Citus) could shard the user tables by
owner and send each statement to one shard.

The flows run in this process through the real API, pages and jobs (extraction inline),
and every statement any thread sends through Django is recorded. A statement on a user
table that does not name the table's owner column is listed; those known are listed below
with what sharding would need (docs/DEPLOY.md, "Partitioning by owner"), and any other
fails the test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.db.backends import utils
from django.test import Client, override_settings

from memories.models import Memory
from recall import bookkeeping
from tests.conftest import client_for
from tests.extraction_helpers import api_client, post_json

# Each user table and the column naming its owner.
OWNER_COLUMNS = {
    "memoryapp_memory": "owner_id",
    "memoryapp_conversation": "owner_id",
    "memoryapp_message": "owner_id",
    "memoryapp_accesslog": "user_id",
    "accounts_apitoken": "user_id",
    "accounts_memorysettings": "user_id",
    # No owner column of their own: reached through their memory or conversation.
    "memoryapp_memoryevent": "owner_id",
    "memoryapp_extractionrun": "owner_id",
}
# Statements known not to name the owner, by (table, kind, the table's columns they filter
# on), each with what sharding by owner would need (docs/DEPLOY.md lists the same).
BY_ID = "a row by its id, after the request checked its owner: add the owner to the filter"
NO_OWNER_COLUMN = "no owner column: copy its memory's or conversation's owner into it"
CORRELATED = "a subquery or join under a query that names the owner: repeat the owner in it"
KNOWN: dict[tuple[str, str, tuple[str, ...]], str] = {
    ("accounts_apitoken", "UPDATE", ("id",)): BY_ID,
    ("memoryapp_memory", "SELECT", ("id",)): BY_ID,
    ("memoryapp_memory", "UPDATE", ("id",)): BY_ID,
    ("memoryapp_memory", "UPDATE", ()): BY_ID + " (the embeddings' bulk update, by ids)",
    ("memoryapp_memory", "DELETE", ("id",)): BY_ID,
    # Memories the deleted one had superseded: the same owner's, or its project's.
    ("memoryapp_memory", "UPDATE", ("superseded_by_id",)): BY_ID,
    ("memoryapp_memory", "SELECT", ()): CORRELATED,
    ("memoryapp_conversation", "UPDATE", ("id",)): BY_ID,
    ("memoryapp_conversation", "SELECT", ()): CORRELATED,
    ("memoryapp_message", "SELECT", ("id",)): BY_ID,
    ("memoryapp_message", "SELECT", ("conversation_id",)): BY_ID + " (its conversation's)",
    ("memoryapp_message", "SELECT", ()): CORRELATED,
    ("memoryapp_message", "UPDATE", ()): BY_ID + " (the embeddings' bulk update, by ids)",
    ("memoryapp_extractionrun", "SELECT", ("conversation_id",)): NO_OWNER_COLUMN,
    ("memoryapp_extractionrun", "SELECT", ("id",)): NO_OWNER_COLUMN,
    ("memoryapp_extractionrun", "INSERT", ()): NO_OWNER_COLUMN,
    ("memoryapp_extractionrun", "UPDATE", ("id",)): NO_OWNER_COLUMN,
    ("memoryapp_memoryevent", "SELECT", ("memory_id",)): NO_OWNER_COLUMN,
    ("memoryapp_memoryevent", "SELECT", ()): NO_OWNER_COLUMN,
    ("memoryapp_memoryevent", "INSERT", ()): NO_OWNER_COLUMN,
    ("memoryapp_memoryevent", "DELETE", ("memory_id",)): NO_OWNER_COLUMN,
    # Deleting a memory forever removes it from every reader's access log: a project
    # memory is in its team members' logs too. One statement over every owner's shard.
    ("memoryapp_accesslog", "UPDATE", ("memory_ids",)): "every reader's log, by nature",
}

# The keys a row is reached by, when not by its owner.
KEYS = {"id", "conversation_id", "memory_id", "superseded_by_id", "memory_ids"}
_WHERE = re.compile(r"\sWHERE\s(.*?)(?:\sORDER BY\s|\sLIMIT\s|\sGROUP BY\s|$)", re.DOTALL)
_TABLE = re.compile(r'(?:FROM|JOIN|UPDATE|INTO)\s+"(\w+)"', re.IGNORECASE)


def statements_without_owner(sql: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(table, kind, the keys it is reached by) of each user table ``sql`` reads or writes
    without naming its owner."""
    kind = sql.lstrip().split(None, 1)[0].upper()
    where = _WHERE.search(sql)
    found = []
    for table in sorted(set(_TABLE.findall(sql)) & set(OWNER_COLUMNS)):
        column = OWNER_COLUMNS[table]
        if f'"{table}"."{column}"' in sql or (
            kind in ("INSERT", "UPDATE", "DELETE") and f'"{column}"' in sql
        ):
            continue
        columns = set(re.findall(rf'"{table}"\."(\w+)"', where[1])) if where else set()
        found.append((table, kind, tuple(sorted(columns & KEYS))))
    return found


@pytest.fixture
def recorded() -> Iterator[list[str]]:
    """Every statement sent through Django, from any thread, while the test runs."""
    statements: list[str] = []
    original = utils.CursorWrapper._execute_with_wrappers

    def recording(self: Any, sql: str, params: Any, many: bool, executor: Any) -> Any:
        statements.append(sql)
        return original(self, sql, params, many, executor)

    utils.CursorWrapper._execute_with_wrappers = recording
    try:
        yield statements
    finally:
        utils.CursorWrapper._execute_with_wrappers = original


def _json(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.content[:500]
    return response.json()


def main_flows(user: Any) -> None:
    """What users and their chat applications do most: ingest, extraction, preview, the
    memory API and pages, commands, delete forever."""
    api: Client = api_client(user)
    conversation = _json(post_json(api, "/api/v1/conversations", {"external_id": "c1"}), 201)
    messages = [
        {"external_id": f"m{i}", "role": "user", "content": text}
        for i, text in enumerate(
            ["I prefer Vue over React for dashboards.", "I live in Lisbon.", "I drink green tea."]
        )
    ]
    path = f"/api/v1/conversations/{conversation['id']}/messages"
    _json(post_json(api, path, {"messages": messages}))
    run = _json(post_json(api, f"/api/v1/conversations/{conversation['id']}/end"), 202)
    _json(api.get(f"/api/v1/extraction-runs/{run['id']}"))
    _json(api.get(f"/api/v1/conversations/{conversation['id']}"))
    memory = _json(
        post_json(api, "/api/v1/memories", {"content": "My cat is called Biscuit."}), 201
    )
    _json(api.get("/api/v1/memories"))
    _json(api.get("/api/v1/memories/search", {"q": "cat"}))
    _json(api.get("/api/v1/memories/stats"))
    _json(api.get(f"/api/v1/memories/{memory['id']}"))
    _json(
        api.patch(
            f"/api/v1/memories/{memory['id']}",
            json.dumps({"content": "My cat is called Pickle.", "revision": memory["revision"]}),
            content_type="application/json",
        )
    )
    _json(api.get(f"/api/v1/memories/{memory['id']}/history"))
    for message in ("What is my cat called?", "Which dashboard framework?"):
        _json(post_json(api, "/api/v1/injection-preview", {"message": message}))
    bookkeeping.flush()
    _json(post_json(api, "/api/v1/commands", {"command": "/remember I ride a bike to work"}))
    _json(post_json(api, "/api/v1/commands", {"command": "/forget bike"}))
    _json(api.delete(f"/api/v1/memories/{memory['id']}"))
    _json(post_json(api, f"/api/v1/memories/{memory['id']}/restore"))
    _json(api.delete(f"/api/v1/memories/{memory['id']}"))

    browser = client_for(user)
    for page in ("/settings/memories", "/settings/memories?state=trash", "/settings/conversations"):
        assert browser.get(page).status_code == 200
    purge = browser.post(f"/settings/memories/{memory['id']}/purge", {"confirm": "forever"})
    assert purge.status_code == 302
    assert not Memory.objects.filter(pk=memory["id"]).exists()


@pytest.mark.django_db(transaction=True)
@override_settings(MEMORY_SIDE_CONNECTIONS=0)
def test_every_statement_on_user_data_names_its_owner(alice: Any, recorded: list[str]) -> None:
    main_flows(alice)
    assert len(recorded) > 100
    unfiltered: dict[tuple[str, str, tuple[str, ...]], str] = {}
    for sql in recorded:
        for found in statements_without_owner(sql):
            unfiltered.setdefault(found, sql)
    unknown = {" ".join(map(str, found)): sql[:500] for found, sql in unfiltered.items()}
    for found in KNOWN:
        unknown.pop(" ".join(map(str, found)), None)
    assert unknown == {}, json.dumps(unknown, indent=1)
