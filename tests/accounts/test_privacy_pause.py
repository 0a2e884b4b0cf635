"""The header's privacy switch: memory paused for an hour, until tomorrow or until resumed.
While paused nothing is extracted (runs skipped, messages sent meanwhile passed over) and
nothing injected (the preview's reason is privacy_paused)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import MemorySettings
from accounts.views import pause_until
from conversations.extraction import runs
from conversations.extraction.runs import execute_run, extraction_request
from conversations.models import Conversation, ExtractionRun, RunStatus
from memories.models import Memory
from tests.conftest import client_for
from tests.extraction_helpers import api_client, conversation_with, post_json
from tests.recall_helpers import ApiClient, remember

pytestmark = pytest.mark.django_db

TALK = [("user", "I prefer Vue over React."), ("assistant", "Got it, Vue it is for the frontend.")]


def test_pause_for_an_hour_shows_on_every_page_and_resumes(alice):
    client = client_for(alice)
    assert 'id="privacy-paused-pill"' not in client.get("/settings/tokens/").content.decode()
    response = client.post("/settings/privacy/pause", {"for": "hour", "next": "/settings/tokens/"})
    assert response.status_code == 302 and response["Location"] == "/settings/tokens/"
    settings = MemorySettings.for_user(alice)
    assert settings.privacy_paused and not settings.paused_indefinitely
    assert settings.paused_until is not None
    assert timedelta(minutes=59) < settings.paused_until - timezone.now() <= timedelta(hours=1)
    for path in ("/settings/tokens/", "/settings/memories", "/settings/conversations"):
        page = client.get(path).content.decode()
        assert 'id="privacy-paused-pill"' in page, path
        assert "Memory paused until" in page

    client.post("/settings/privacy/resume", {"next": "/settings/tokens/"})
    assert not MemorySettings.for_user(alice).privacy_paused
    assert 'id="privacy-paused-pill"' not in client.get("/settings/tokens/").content.decode()


def test_pause_until_turned_back_on_and_until_tomorrow(alice):
    client = client_for(alice)
    client.post("/settings/privacy/pause", {"for": "off"})
    settings = MemorySettings.for_user(alice)
    assert settings.paused_indefinitely and settings.privacy_paused
    assert "Memory paused" in client.get("/settings/tokens/").content.decode()

    tomorrow = pause_until("tomorrow")
    assert tomorrow is not None
    assert tomorrow.date() == (timezone.localtime() + timedelta(days=1)).date()
    assert (tomorrow.hour, tomorrow.minute) == (0, 0)


def test_a_pause_ends_by_itself(alice):
    settings = MemorySettings.for_user(alice)
    settings.pause(timezone.now() - timedelta(seconds=1))
    assert not MemorySettings.for_user(alice).privacy_paused


def test_bad_choice_and_foreign_next_change_nothing(alice):
    client = client_for(alice)
    response = client.post("/settings/privacy/pause", {"for": "forever", "next": "https://x.io/"})
    assert response.status_code == 302 and response["Location"].startswith("/settings/memories")
    assert not MemorySettings.for_user(alice).privacy_paused


def test_anonymous_goes_to_login_and_sees_no_switch(alice):
    response = Client().post("/settings/privacy/pause", {"for": "hour"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert Client().get("/settings/privacy/pause").status_code in (302, 405)
    assert "privacy-switch" not in Client().get("/accounts/login/").content.decode()


def test_preview_says_privacy_paused_and_injects_nothing(alice):
    remember(alice, "Prefers tabs over spaces")
    MemorySettings.for_user(alice).pause(None)
    preview = ApiClient(alice).post("/injection-preview", {"message": "tabs?"}).json()
    assert (preview["enabled"], preview["reason"]) == (False, "privacy_paused")
    assert preview["block"] == "" and preview["memories"] == []


def test_extraction_runs_while_paused_are_skipped_and_pass_over_the_messages(alice):
    conversation = conversation_with(alice, *TALK)
    MemorySettings.for_user(alice).pause(timezone.now() + timedelta(hours=1))
    run = execute_run(extraction_request(conversation=conversation, trigger="turns").pk)
    assert (run.status, run.skip_reason) == (RunStatus.SKIPPED, runs.SKIP_PRIVACY_PAUSED)
    assert not Memory.objects.exists()
    conversation.refresh_from_db()
    # Resumed later, those messages stay unread by extraction.
    assert conversation.extracted_through == 2


def test_messages_sent_while_paused_are_kept_and_never_extracted(alice):
    client = api_client(alice)
    created = post_json(client, "/api/v1/conversations", {"external_id": "chat"}).json()
    MemorySettings.for_user(alice).pause(None)
    messages = [
        {"external_id": f"m{i}", "role": "user", "content": f"I prefer Vue, really ({i})."}
        for i in range(6)
    ]
    out = post_json(
        client, f"/api/v1/conversations/{created['id']}/messages", {"messages": messages}
    ).json()
    assert out["stored"] == 6 and out["extraction_run"] is None
    conversation = Conversation.objects.get(pk=created["id"])
    assert conversation.messages.count() == 6
    assert conversation.extracted_through == 6
    assert not ExtractionRun.objects.exists()

    MemorySettings.for_user(alice).resume()
    run = execute_run(extraction_request(conversation=conversation, trigger="manual").pk)
    assert run.skip_reason == runs.SKIP_NOTHING_NEW


def test_with_memory_off_the_header_says_so_instead_of_offering_a_pause(alice, bob, project):
    """New accounts start with memory off: there is nothing to pause (issue 44 item 11)."""
    MemorySettings.objects.filter(user=bob).update(memory_enabled=False)
    client = client_for(bob)
    page = client.get("/settings/tokens/").content.decode()
    assert "Pause memory" not in page
    assert 'class="privacy-pill privacy-off" href="/settings/memories#memory-settings"' in page
    assert "Pause memory" in client_for(alice).get("/settings/tokens/").content.decode()
    # A project's page tells the member why their assistants get none of its memories.
    project_page = client.get(f"/projects/{project.slug}/memories").content.decode()
    assert "Your memory is off." in project_page
    assert "Your memory is off." not in (
        client_for(alice).get(f"/projects/{project.slug}/memories").content.decode()
    )
