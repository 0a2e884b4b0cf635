"""Helpers for the recall and API tests: memories that are embedded as the worker would,
and a JSON client that sends a personal API token."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

from accounts.models import ApiToken
from memories import services
from memories.jobs import embed_memories
from memories.models import Memory


def remember(owner: Any, content: str, **fields: Any) -> Memory:
    """Create a memory through the service and run its embedding job, as the worker does."""
    memory = services.memory_create(owner=owner, content=content, actor=owner, **fields)
    embed_memories([memory.pk])
    memory.refresh_from_db()
    return memory


class ApiClient:
    """The test client speaking JSON with ``Authorization: Bearer <token>``."""

    def __init__(self, user: Any, **headers: str):
        self.token, secret = ApiToken.issue(user=user, name="test app")
        self.client = Client(headers={"Authorization": f"Bearer {secret}", **headers})

    def _send(self, method: str, path: str, body: Any = None, **extra: Any) -> Any:
        kwargs: dict[str, Any] = dict(extra)
        if body is not None:
            kwargs.update(data=json.dumps(body), content_type="application/json")
        return getattr(self.client, method)(f"/api/v1{path}", **kwargs)

    def get(self, path: str, params: dict[str, Any] | None = None, **extra: Any) -> Any:
        return self.client.get(f"/api/v1{path}", params or {}, **extra)

    def post(self, path: str, body: Any = None, **extra: Any) -> Any:
        return self._send("post", path, body if body is not None else {}, **extra)

    def patch(self, path: str, body: Any, **extra: Any) -> Any:
        return self._send("patch", path, body, **extra)

    def delete(self, path: str, **extra: Any) -> Any:
        return self._send("delete", path, **extra)


def error_code(response: Any) -> str:
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    return response.json()["error"]["code"]
