from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.template import Context, Template
from django.test import RequestFactory
from django.utils import timezone

from conversations.extraction.runs import execute_run, extraction_request, run_batch
from conversations.notices import extraction_notices, faded_this_week
from memories.models import Memory
from memories.services import memory_create
from tests.conftest import client_for
from tests.extraction_helpers import conversation_with

pytestmark = pytest.mark.django_db


def _extract(owner: Any, text: str) -> Any:
    conversation = conversation_with(owner, ("user", text))
    return execute_run(extraction_request(conversation=conversation, trigger="manual").pk)


def _render(user: Any) -> str:
    request = RequestFactory().get("/settings/memories")
    request.user = user
    template = Template("{% load extraction_notices %}{% extraction_notice %}")
    return template.render(Context({"request": request}))


def test_notice_lists_what_extraction_changed(alice: Any) -> None:
    _extract(alice, "I prefer Vue for the frontend")
    run = _extract(alice, "I now prefer React")
    notices = extraction_notices(alice)
    assert notices[0].batch == run_batch(run.pk)
    assert [(change, m.content) for change, m in notices[0].changes] == [
        ("added", "Prefers React"),
        ("replaced", "Prefers Vue for the frontend"),
    ]
    html = _render(alice)
    assert "Memory updated" in html and "<del>Prefers Vue for the frontend</del>" in html
    assert f"/notices/extraction/{run.pk and run_batch(run.pk)}/undo" in html


def test_undo_reverts_the_whole_run_and_the_notice_goes(alice: Any) -> None:
    _extract(alice, "I prefer Vue for the frontend")
    run = _extract(alice, "I now prefer React")
    response = client_for(alice).post(
        f"/notices/extraction/{run_batch(run.pk)}/undo", {"next": "/settings/memories"}
    )
    assert response.status_code == 302 and response.url == "/settings/memories"
    assert [m.content for m in Memory.objects.in_effect()] == ["Prefers Vue for the frontend"]
    assert [n.batch for n in extraction_notices(alice)] != [run_batch(run.pk)]


def test_undo_with_htmx_returns_the_partial(alice: Any) -> None:
    run = _extract(alice, "I prefer Vue for the frontend")
    response = client_for(alice).post(
        f"/notices/extraction/{run_batch(run.pk)}/undo", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert 'id="extraction-notice"' in response.content.decode()
    assert "Memory updated" not in response.content.decode()


def test_someone_elses_batch_cannot_be_undone(alice: Any, charlie: Any) -> None:
    run = _extract(alice, "I prefer Vue for the frontend")
    response = client_for(charlie).post(f"/notices/extraction/{run_batch(run.pk)}/undo")
    assert response.status_code == 404
    assert Memory.objects.in_effect().count() == 1


def test_dismiss_hides_notices_until_the_next_change(alice: Any) -> None:
    _extract(alice, "I prefer Vue for the frontend")
    response = client_for(alice).post(
        "/notices/extraction/dismiss", {"next": "https://evil.example/"}
    )
    assert response.url == "/settings/memories"
    assert extraction_notices(alice) == []
    _extract(alice, "We use pytest for tests")
    assert len(extraction_notices(alice)) == 1


def test_faded_this_week_with_a_link_to_restore(alice: Any) -> None:
    memory = memory_create(owner=alice, content="An old fact")
    Memory.objects.filter(pk=memory.pk).update(forgotten_at=timezone.now() - timedelta(days=1))
    old = memory_create(owner=alice, content="Faded long ago")
    Memory.objects.filter(pk=old.pk).update(forgotten_at=timezone.now() - timedelta(days=9))
    assert faded_this_week(alice) == 1
    html = _render(alice)
    assert "1 memory faded this week." in html
    assert 'href="/settings/memories?state=forgotten"' in html


def test_the_settings_page_shows_the_notice_with_its_undo(alice: Any) -> None:
    run = _extract(alice, "I prefer Vue for the frontend")
    page = client_for(alice).get("/settings/memories").content.decode()
    assert "Memory updated" in page and "Prefers Vue for the frontend" in page
    assert f"/notices/extraction/{run_batch(run.pk)}/undo" in page


def test_a_removed_member_cannot_undo_an_extraction_in_the_project(bob: Any, project: Any) -> None:
    """Undo changes project memories, so it re-checks the current membership."""
    conversation = conversation_with(
        bob, ("user", "We use pytest for tests in this project"), project=project
    )
    run = execute_run(extraction_request(conversation=conversation, trigger="manual").pk)
    memory = Memory.objects.in_effect().get()
    assert memory.project_id == project.pk
    client = client_for(bob)
    project.team.memberships.filter(user=bob).delete()
    response = client.post(f"/notices/extraction/{run_batch(run.pk)}/undo")
    assert response.status_code == 404
    assert Memory.objects.in_effect().get() == memory
