"""The app as a team past one machine runs it: a separate PostgreSQL server (TLS, passwords,
a role that is no superuser), two web processes (uvicorn, the connection pool on) and two
job workers (qcluster, the ORM broker README recommends), all through
``DATABASE_URL=postgres://…?sslmode=require``.

One deployment serves the whole module, in order: migrate; a conversation goes in, is
extracted, recalled and deleted forever; many go in through both web processes at once and
every message is read exactly once; what one web process writes the other sees at once,
pause and revocation included; then every process stops gracefully on SIGTERM.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import httpx2
import pytest

from tests.deploy.app import App, Web, post_form, running, signed_in
from tests.deploy.server import APP_ROLE, ExternalPostgres
from tests.live_asgi import FakeUpstream

# Small windows, so a conversation is read in several runs (and follow-up runs).
WINDOW_MESSAGES = 6
EVERY_USER_TURNS = 3
CONVERSATIONS = 6
BATCHES = 8
SETTLES_WITHIN = 240.0
DATABASE = "topology"
USERS = ("mia@example.com", "noah@example.com", "ines@example.com", "omar@example.com",
         "lena@example.com")  # fmt: skip
STOPS_WITHIN = 25.0


@dataclass
class Deployment:
    server: ExternalPostgres
    app: App
    web_a: Web
    web_b: Web
    workers: list[Any]
    upstream: FakeUpstream
    tokens: dict[str, str]

    def sql(self, statement: str, *params: Any) -> list[tuple[Any, ...]]:
        with self.server.connect(DATABASE) as conn:
            return conn.execute(statement, params or None).fetchall()


@pytest.fixture(scope="module")
def deployment(external_postgres: ExternalPostgres) -> Iterator[Deployment]:
    external_postgres.create_database(DATABASE)
    with FakeUpstream() as upstream:
        app = App(
            external_postgres.url(DATABASE),
            name="topology",
            extra_env={
                "EXTRACTION_WINDOW_MESSAGES": str(WINDOW_MESSAGES),
                "EXTRACTION_EVERY_USER_TURNS": str(EVERY_USER_TURNS),
                "MEMORY_PROXY_UPSTREAM_URL": upstream.url,
            },
        )
        with running(app):
            app.manage("migrate", "--noinput")
            # Each process names itself to the server (the URL's application_name).
            workers = [
                app.worker(name, DATABASE_URL=_named(app, name))
                for name in ("worker-1", "worker-2")
            ]
            with ThreadPoolExecutor(2) as pool:
                web_a, web_b = pool.map(
                    lambda name: app.web(name, DATABASE_URL=_named(app, name)), ("web-a", "web-b")
                )
            tokens = app.make_users(*USERS)
            yield Deployment(external_postgres, app, web_a, web_b, workers, upstream, tokens)


def _named(app: App, name: str) -> str:
    return f"{app.database_url}&application_name={name}"


def _json(response: httpx2.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _preview(web: Web, token: str, message: str) -> dict[str, Any]:
    with web.client(token) as client:
        # Memories only: with past turns on, a memory's own source turn may stand in for it.
        body = {"message": message, "sources": ["memories"]}
        return dict(_json(client.post("/api/v1/injection-preview", json=body)))


def _recalled(preview: dict[str, Any]) -> list[str]:
    return [memory["content"] for memory in preview["memories"]]


def test_migrate_leaves_every_table_to_the_app_role_and_it_is_no_superuser(
    deployment: Deployment,
) -> None:
    assert (
        deployment.sql(
            "SELECT tablename, tableowner FROM pg_tables WHERE schemaname = 'public' "
            "AND tableowner <> %s",
            APP_ROLE,
        )
        == []
    )
    assert deployment.sql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")[0][0] > 20
    assert deployment.sql(
        "SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = %s", APP_ROLE
    ) == [(False, False, False)]
    # Every connection of the app came over TLS: the front refused none.
    assert deployment.server.front_connections()["refused"] == 0


def test_a_conversation_is_ingested_extracted_recalled_and_deleted_forever(
    deployment: Deployment,
) -> None:
    token = deployment.tokens["mia@example.com"]
    with deployment.web_a.client(token) as client:
        conversation = _json(
            client.post("/api/v1/conversations", json={"external_id": "chat-1", "title": "UI"}),
            201,
        )
        _json(
            client.post(
                f"/api/v1/conversations/{conversation['id']}/messages",
                json={
                    "messages": [
                        {"external_id": "m1", "role": "user",
                         "content": "I prefer Vue over React for dashboards."},
                        {"external_id": "m2", "role": "assistant", "content": "Noted."},
                    ]
                },
            ),
        )  # fmt: skip
        run = _json(client.post(f"/api/v1/conversations/{conversation['id']}/end"), 202)
        run_id = run["extraction_run"]["id"] if "extraction_run" in run else run["id"]
        deadline = time.monotonic() + SETTLES_WITHIN
        while (state := _json(client.get(f"/api/v1/extraction-runs/{run_id}")))["status"] in (
            "queued",
            "running",
        ):
            assert time.monotonic() < deadline, state
            time.sleep(0.3)
        assert state["status"] == "succeeded", state
        memories = _json(client.get("/api/v1/memories"))["items"]
    [memory] = [m for m in memories if "Vue" in m["content"]]

    # Recalled by the other web process.
    preview = _preview(deployment.web_b, token, "Should the dashboards use Vue or React?")
    assert memory["content"] in _recalled(preview)

    # To the trash through the API, then deleted forever on the memory page.
    with deployment.web_b.client(token) as client:
        _json(client.delete(f"/api/v1/memories/{memory['id']}"))
    with signed_in(deployment.web_a, "mia@example.com") as browser:
        response = post_form(
            browser, f"/settings/memories/{memory['id']}/purge", {"confirm": "forever"}
        )
        assert response.status_code == 200, response.text[:500]
    assert deployment.sql("SELECT count(*) FROM memoryapp_memory WHERE id = %s", memory["id"]) == [
        (0,)
    ]
    assert deployment.sql(
        "SELECT count(*) FROM memoryapp_memoryevent WHERE memory_id = %s", memory["id"]
    ) == [(0,)]
    preview = _preview(deployment.web_a, token, "Should the dashboards use Vue or React?")
    assert memory["content"] not in _recalled(preview)


def _send_conversation(web: Web, token: str, number: int) -> int:
    """A conversation sent in BATCHES batches of 3 messages; its id."""
    with web.client(token) as client:
        conversation = _json(
            client.post("/api/v1/conversations", json={"external_id": f"load-{number}"}), 201
        )
        path = f"/api/v1/conversations/{conversation['id']}/messages"
        for batch in range(BATCHES):
            messages = [
                {"external_id": f"{batch}-u", "role": "user",
                 "content": f"I prefer tool {number}-{batch} over the older one for builds."},
                {"external_id": f"{batch}-a", "role": "assistant", "content": "Got it."},
                {"external_id": f"{batch}-v", "role": "user",
                 "content": f"My colleague number {batch} lives in city {number}."},
            ]  # fmt: skip
            _json(client.post(path, json={"messages": messages}))
        _json(client.post(f"/api/v1/conversations/{conversation['id']}/end"), 202)
        return int(conversation["id"])


def test_two_workers_read_every_message_exactly_once(deployment: Deployment) -> None:
    token = deployment.tokens["noah@example.com"]
    webs = [deployment.web_a, deployment.web_b]
    with ThreadPoolExecutor(4) as pool:
        ids = list(
            pool.map(lambda n: _send_conversation(webs[n % 2], token, n), range(CONVERSATIONS))
        )
    total = 3 * BATCHES
    deadline = time.monotonic() + SETTLES_WITHIN
    while True:
        pending = deployment.sql(
            "SELECT count(*) FROM memoryapp_extractionrun WHERE conversation_id = ANY(%s) "
            "AND status IN ('queued', 'running')",
            ids,
        )[0][0]
        behind = deployment.sql(
            "SELECT count(*) FROM memoryapp_conversation WHERE id = ANY(%s) "
            "AND extracted_through < %s",
            ids,
            total,
        )[0][0]
        if not pending and not behind:
            break
        assert time.monotonic() < deadline, f"{pending} runs pending, {behind} behind"
        time.sleep(0.5)

    runs = deployment.sql(
        "SELECT conversation_id, status, window_first, window_last, attempts "
        "FROM memoryapp_extractionrun WHERE conversation_id = ANY(%s) "
        "AND window_first IS NOT NULL ORDER BY conversation_id, window_first",
        ids,
    )
    assert {status for _c, status, *_ in runs} <= {"succeeded", "skipped"}
    assert all(attempts == 1 for *_rest, attempts in runs)
    for conversation_id in ids:
        windows = [(first, last) for c, _s, first, last, _a in runs if c == conversation_id]
        # Contiguous, without overlap, from the first message to the last: each read once.
        assert windows[0][0] == 1 and windows[-1][1] == total, windows
        assert all(b[0] == a[1] + 1 for a, b in pairwise(windows)), windows
        assert all(last - first < WINDOW_MESSAGES for first, last in windows), windows
    assert len(runs) >= CONVERSATIONS * total // WINDOW_MESSAGES


def test_what_one_web_process_writes_the_other_recalls_at_once(deployment: Deployment) -> None:
    token = deployment.tokens["ines@example.com"]
    for writer, reader, text in (
        (deployment.web_a, deployment.web_b, "My cat is called Biscuit."),
        (deployment.web_b, deployment.web_a, "My dog is called Pepper."),
    ):
        with writer.client(token) as client:
            memory = _json(client.post("/api/v1/memories", json={"content": text}), 201)
        assert text in _recalled(_preview(reader, token, "What are my pets called?"))
    # An edit through one is what the other recalls next.
    with deployment.web_a.client(token) as client:
        _json(
            client.patch(
                f"/api/v1/memories/{memory['id']}",
                json={"content": "My dog is called Pickle.", "revision": memory["revision"]},
            )
        )
    recalled = _recalled(_preview(deployment.web_b, token, "What are my pets called?"))
    assert "My dog is called Pickle." in recalled
    assert "My dog is called Pepper." not in recalled


def test_privacy_pause_and_token_revocation_take_effect_on_both(deployment: Deployment) -> None:
    token = deployment.tokens["omar@example.com"]
    with deployment.web_a.client(token) as client:
        _json(client.post("/api/v1/memories", json={"content": "I take the 7:40 train."}), 201)
    question = "Which train do I take?"
    for web in (deployment.web_a, deployment.web_b):
        assert "I take the 7:40 train." in _recalled(_preview(web, token, question))

    with signed_in(deployment.web_a, "omar@example.com") as browser:
        post_form(browser, "/settings/privacy/pause", {"for": "hour"})
        for web in (deployment.web_a, deployment.web_b):
            preview = _preview(web, token, question)
            assert (preview["reason"], preview["block"]) == ("privacy_paused", "")

    with signed_in(deployment.web_b, "omar@example.com") as browser:
        post_form(browser, "/settings/privacy/resume", {})
        for web in (deployment.web_a, deployment.web_b):
            assert "I take the 7:40 train." in _recalled(_preview(web, token, question))
        token_id = deployment.sql(
            "SELECT t.id FROM accounts_apitoken t JOIN auth_user u ON u.id = t.user_id "
            "WHERE u.email = %s",
            "omar@example.com",
        )[0][0]
        post_form(browser, f"/settings/tokens/{token_id}/revoke", {})

    for web in (deployment.web_a, deployment.web_b):
        with web.client(token) as client:
            assert client.get("/api/v1/me").status_code == 401
            assert client.get("/api/v1/memories/search", params={"q": "train"}).status_code == 401
            assert client.get("/v1/models").status_code == 401


def _app_connections(deployment: Deployment, name: str) -> int:
    return int(
        deployment.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", name)[
            0
        ][0]
    )


def _stopped_gracefully(deployment: Deployment, web: Web, name: str) -> None:
    # uvicorn ends by the signal it was stopped with, once it has shut down.
    assert web.process.wait(timeout=STOPS_WITHIN) in (0, -signal.SIGTERM)
    assert "Finished server process" in deployment.app.log(name).read_text()


def test_web_and_workers_stop_gracefully_on_sigterm(deployment: Deployment) -> None:
    token = deployment.tokens["lena@example.com"]
    deployment.upstream.delay = 3.0
    assert _app_connections(deployment, "web-a") > 0
    assert _app_connections(deployment, "worker-1") > 0

    # A chat through the proxy is under way on web A (its model answers in 3 s) when web A
    # is asked to stop: it answers that request, takes no new one, and exits.
    with ThreadPoolExecutor(1) as pool, deployment.web_a.client(token) as client:
        chat = pool.submit(
            client.post,
            "/v1/chat/completions",
            json={"model": "llama3", "messages": [{"role": "user", "content": "Hi"}]},
        )
        time.sleep(1.0)
        stopping = time.monotonic()
        os.killpg(deployment.web_a.process.pid, signal.SIGTERM)
        assert chat.result().status_code == 200
    _stopped_gracefully(deployment, deployment.web_a, "web-a")
    assert time.monotonic() - stopping < STOPS_WITHIN

    # The other web process serves on.
    assert _preview(deployment.web_b, token, "Hello")["enabled"] is True

    # Workers: stop within WORKER_STOP_SECONDS (5 s here) and a little.
    for worker in deployment.workers:
        os.killpg(worker.pid, signal.SIGTERM)
    for worker in deployment.workers:
        assert worker.wait(timeout=STOPS_WITHIN) == 0
    os.killpg(deployment.web_b.process.pid, signal.SIGTERM)
    _stopped_gracefully(deployment, deployment.web_b, "web-b")

    # Nothing of theirs is left connected to the server.
    for name in ("web-a", "web-b", "worker-1", "worker-2"):
        deadline = time.monotonic() + 5
        while _app_connections(deployment, name):
            assert time.monotonic() < deadline, f"{name} left connections open"
            time.sleep(0.2)
