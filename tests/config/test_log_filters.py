"""The web log: one line per refused request."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import client_for


@pytest.mark.django_db
def test_a_refused_request_is_one_line_in_the_log(
    bob: Any, team: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 42, item 12: each refusal wrote its whole traceback to the web log."""
    with caplog.at_level("WARNING", logger="django.request"):
        response = client_for(bob).post(f"/teams/{team.slug}/invite", {"email": "x@example.com"})
    assert response.status_code == 403
    refusals = [record for record in caplog.records if record.name == "django.request"]
    assert refusals and all(record.exc_info is None for record in refusals)
    assert "Traceback" not in caplog.text
