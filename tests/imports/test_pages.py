"""The import section of /settings/data, as plain form posts and as htmx."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from conversations.models import Conversation
from imports.models import Import
from tests.conftest import client_for
from tests.imports.helpers import CLAUDE_JSON, chatgpt_zip, upload

pytestmark = pytest.mark.django_db(transaction=True)
HTMX: dict[str, Any] = {"HTTP_HX_REQUEST": "true"}


def page(client: Client) -> str:
    """/settings/data's text, its whitespace runs made one space."""
    response = client.get("/settings/data")
    assert response.status_code == 200
    return " ".join(response.content.decode().split())


def test_the_whole_flow_as_plain_form_posts(alice: Any) -> None:
    client = client_for(alice)
    assert "Bring your history" in page(client)
    response = client.post("/settings/data/imports", {"source": "chatgpt", "file": chatgpt_zip()})
    job = Import.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/settings/data#import-{job.pk}"
    html = page(client)
    assert "3 conversations, 7 messages" in html
    assert "English (2), 中文 (1)" in html
    assert "Jan. 1, 2023 – June 12, 2024" in html
    assert "2 conversations, skipped" in html  # temporary or private
    assert "Import 3 conversations" in html
    response = client.post(
        f"/settings/data/imports/{job.pk}/start",
        {"keep_conversations": "on", "build_memories": "on"},
    )
    assert response.status_code == 302
    html = page(client)
    assert "3 conversations imported" in html
    assert "3 memories built, 1 replacing an older one" in html
    assert "Undo this import" in html
    client.post(f"/settings/data/imports/{job.pk}/undo")
    assert "Undone: 3 conversations deleted" in page(client)
    assert not Conversation.objects.exists()
    client.post(f"/settings/data/imports/{job.pk}/discard")
    assert not Import.objects.exists()


def test_form_mistakes_re_render_with_the_message(alice: Any) -> None:
    client = client_for(alice)
    response = client.post("/settings/data/imports", {"source": "chatgpt"})
    assert response.status_code == 400
    assert "Choose the export&#x27;s .zip or its conversations.json." in response.content.decode()
    response = client.post("/settings/data/imports", {"source": "memories", "text": "  "})
    assert "Choose a file, or paste the memories here." in response.content.decode()
    assert not Import.objects.exists()


def test_a_refused_file_is_explained_on_the_card(alice: Any) -> None:
    client = client_for(alice)
    client.post("/settings/data/imports", {"source": "chatgpt", "file": upload(CLAUDE_JSON)})
    html = page(client)
    assert "This is a Claude export, not what was chosen." in html
    assert "Settings → Data controls → Export data" in html


def test_choosing_nothing_is_refused_and_said(alice: Any) -> None:
    client = client_for(alice)
    client.post("/settings/data/imports", {"source": "claude", "file": upload(CLAUDE_JSON)})
    job = Import.objects.get()
    response = client.post(f"/settings/data/imports/{job.pk}/start", {}, **HTMX)
    assert "Choose at least one" in response.content.decode()
    job.refresh_from_db()
    assert job.status == "ready"


def test_htmx_answers_with_the_section_and_polls_the_card(alice: Any, monkeypatch: Any) -> None:
    from imports import services

    monkeypatch.setattr(services, "enqueue_step", lambda import_id: None)
    client = client_for(alice)
    response = client.post(
        "/settings/data/imports", {"source": "claude", "file": upload(CLAUDE_JSON)}, **HTMX
    )
    html = response.content.decode()
    job = Import.objects.get()
    assert html.lstrip().startswith('<section class="card data-section imports-section"')
    assert f'hx-get="/settings/data/imports/{job.pk}"' in html and 'hx-trigger="every 1s"' in html
    assert "You can import another file once this one is done." in html
    card = client.get(f"/settings/data/imports/{job.pk}", **HTMX)
    assert card.content.decode().lstrip().startswith("<article")
    assert "Reading the file" in card.content.decode()
    services.run_import(job.pk)
    done_reading = client.get(f"/settings/data/imports/{job.pk}", **HTMX)
    # No longer polled: the whole section comes back (with the upload form).
    assert done_reading["HX-Retarget"] == "#imports"
    assert "every 1s" not in done_reading.content.decode()
    assert "Import 2 conversations" in done_reading.content.decode()


def test_another_persons_import_is_not_found(alice: Any, bob: Any) -> None:
    client_for(alice).post(
        "/settings/data/imports", {"source": "claude", "file": upload(CLAUDE_JSON)}
    )
    job = Import.objects.get()
    stranger = client_for(bob)
    assert stranger.get(f"/settings/data/imports/{job.pk}", **HTMX).status_code == 404
    assert stranger.post(f"/settings/data/imports/{job.pk}/discard").status_code == 404
    assert "Planning the survey app" not in page(stranger)


def test_the_section_in_chinese(alice: Any) -> None:
    client = client_for(alice)
    client.post("/settings/data/imports", {"source": "claude", "file": upload(CLAUDE_JSON)})
    response = client.get("/settings/data", HTTP_ACCEPT_LANGUAGE="zh-hans")
    html = response.content.decode()
    assert "导入你的历史" in html
    assert "作为过往对话保留" in html
    assert "English (1)" in html and "中文 (1)" in html
