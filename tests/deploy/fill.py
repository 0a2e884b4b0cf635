"""Fill a database with what users leave in it, through the public JSON API only.

Run inside a ``manage.py shell`` of the app (``exec`` of this file, then ``fill(…)``), so it
works with any release of the code whose API is /api/v1/ (the upgrade test runs it with
the previous release's). Each user gets a token, memories, conversations whose messages
are extracted (jobs run inline: Q_SYNC=true), and previews, which fill the access log.
It prints ``token EMAIL SECRET`` for each user, and ``code FOLDER``, the code's folder.
"""

from __future__ import annotations

import json
import os
from typing import Any

PASSWORD = "correct-horse-battery"
TOPICS = ["pytest", "Vue", "Rust", "sourdough", "climbing", "Berlin", "tea", "Postgres"]


def _post(client: Any, path: str, body: Any, status: tuple[int, ...] = (200, 201, 202)) -> Any:
    response = client.post(path, json.dumps(body), content_type="application/json")
    assert response.status_code in status, (path, response.status_code, response.content[:300])
    return response.json()


def fill(users: int, memories: int, conversations: int, messages: int) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from accounts.models import ApiToken, MemorySettings

    for number in range(users):
        email = f"user{number}@example.com"
        user = get_user_model().objects.create_user(
            username=f"user{number}", email=email, password=PASSWORD
        )
        MemorySettings.objects.filter(user=user).update(memory_enabled=True)
        _token, secret = ApiToken.issue(user=user, name="chat")
        print("token", email, secret)
        ApiToken.issue(user=user, name="old laptop")[0].revoke()
        client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
        for index in range(memories):
            topic = TOPICS[index % len(TOPICS)]
            _post(
                client,
                "/api/v1/memories",
                {
                    "content": f"User {number} note {index}: likes {topic} ({index})",
                    "tags": [topic],
                },
            )
        for conversation_number in range(conversations):
            conversation = _post(
                client,
                "/api/v1/conversations",
                {
                    "external_id": f"chat-{conversation_number}",
                    "title": f"Chat {conversation_number}",
                },
            )
            batch = [
                {
                    "external_id": f"m{index}",
                    "role": "user" if index % 2 == 0 else "assistant",
                    "content": (
                        f"I prefer {TOPICS[index % len(TOPICS)]} over the rest, take {index}."
                        if index % 2 == 0
                        else "Noted."
                    ),
                }
                for index in range(messages)
            ]
            _post(
                client, f"/api/v1/conversations/{conversation['id']}/messages", {"messages": batch}
            )
            _post(client, f"/api/v1/conversations/{conversation['id']}/end", {})
        for topic in TOPICS:
            _post(client, "/api/v1/injection-preview", {"message": f"What about {topic}?"})
    import config

    print("code", os.path.dirname(os.path.dirname(config.__file__)))
    try:  # Previews write their access log after they answer.
        from recall import bookkeeping

        bookkeeping.flush()
    except ImportError:
        pass
