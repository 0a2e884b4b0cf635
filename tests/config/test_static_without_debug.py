"""With DEBUG off the pages work whether or not collectstatic ran (README: it is not needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db

PRODUCTION_STORAGES = {
    **settings.STORAGES,
    "staticfiles": {"BACKEND": "config.storage.StaticStorage"},
}


def _pages(client: Client) -> None:
    for path in ("/", "/accounts/login/", "/api/v1/docs"):
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
    assert "/static/css/app" in client.get("/").content.decode()


def test_pages_work_with_debug_off_and_no_collectstatic(tmp_path: Path) -> None:
    with override_settings(DEBUG=False, STORAGES=PRODUCTION_STORAGES, STATIC_ROOT=tmp_path):
        _pages(Client(raise_request_exception=False))


def test_pages_use_hashed_names_after_collectstatic(tmp_path: Path, alice: Any) -> None:
    with override_settings(DEBUG=False, STORAGES=PRODUCTION_STORAGES, STATIC_ROOT=tmp_path):
        call_command("collectstatic", interactive=False, verbosity=0)
        _pages(Client(raise_request_exception=False))
        html = Client().get("/accounts/login/").content.decode()
        assert "/static/css/app.css" not in html and "/static/css/app." in html
