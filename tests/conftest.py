"""Shared fixtures: three people as in healthchecks' tests, a team and a project, a browser.

alice owns a team and its project; bob is a member of it; vera is a viewer;
charlie has no access to anything of theirs.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import translation

from accounts.models import MemorySettings
from core import side_connections
from recall import bookkeeping
from teams.models import Membership, Project, Role, Team

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


@pytest.fixture(autouse=True)
def default_language() -> Iterator[None]:
    """Each test starts in the default language: a request in Chinese leaves its
    language active in the thread, and code run outside a request would inherit it."""
    translation.deactivate()
    yield
    translation.deactivate()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Work a test left on side connections, and a preview's bookkeeping still gathered, end
    before the test's fixtures are torn down (a transactional test's tables are emptied),
    and the side connections close before the test database is dropped."""
    bookkeeping.flush()
    side_connections.finish()


@pytest.fixture
def vectors_find_meaning(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests' hash embeddings count in the preview's fusion as a model's vectors would
    (``search.hybrid.vector_weight``): for tests of the vector search itself."""
    monkeypatch.setattr("search.hybrid.finds_meaning", lambda provider: True)


def make_user(email: str, *, memory_enabled: bool = True, **extra: Any) -> Any:
    user = get_user_model().objects.create_user(
        username=email.split("@")[0], email=email, password="correct-horse-battery", **extra
    )
    MemorySettings.objects.filter(user=user).update(memory_enabled=memory_enabled)
    return user


@pytest.fixture
def alice(db: None) -> Any:
    return make_user("alice@example.com")


@pytest.fixture
def bob(db: None) -> Any:
    return make_user("bob@example.com")


@pytest.fixture
def vera(db: None) -> Any:
    return make_user("vera@example.com")


@pytest.fixture
def charlie(db: None) -> Any:
    return make_user("charlie@example.com")


@pytest.fixture
def team(alice: Any, bob: Any, vera: Any) -> Team:
    team = Team.objects.create(name="Rail Team")
    Membership.objects.create(team=team, user=alice, role=Role.OWNER)
    Membership.objects.create(team=team, user=bob, role=Role.MEMBER)
    Membership.objects.create(team=team, user=vera, role=Role.VIEWER)
    return team


@pytest.fixture
def project(team: Team) -> Project:
    return Project.objects.create(team=team, name="Track Survey")


@pytest.fixture
def adam(team: Team) -> Any:
    """An admin of the team."""
    user = make_user("adam@example.com")
    Membership.objects.create(team=team, user=user, role=Role.ADMIN)
    return user


@pytest.fixture
def people(alice: Any, adam: Any, bob: Any, vera: Any, charlie: Any) -> dict[str, Any]:
    return {"owner": alice, "admin": adam, "member": bob, "viewer": vera, "stranger": charlie}


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


# Browser tests -------------------------------------------------------------

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Any, live_server: Any) -> Iterator[Any]:
    context = browser.new_context(base_url=live_server.url, locale="en-US")
    context.set_default_timeout(10_000)
    page = context.new_page()
    yield page
    context.close()


def browser_login(page: Any, live_server: Any, user: Any) -> None:
    """Give the browser a session for ``user`` without going through the log-in form."""
    cookie = client_for(user).cookies[settings.SESSION_COOKIE_NAME]
    page.context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": cookie.value, "url": live_server.url}]
    )


def save_screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
