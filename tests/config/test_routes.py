"""The route sweep: every URL the project resolves, asked by the wrong people and the wrong way.

ROUTES is the one place that says, for each URL name, the methods it answers, which of the
owner's objects its URL names, and who else may reach it. From it:

- anonymous: a page redirects to the log-in page, the API answers 401 JSON; only the routes
  marked ``public`` (each with its reason) answer anyone;
- a method the URL does not answer: 405 (never 200, never 500);
- another user naming the owner's object: 404, as if it did not exist (never 200, never 403);
- a team viewer on an action for members, admins or owners: 403.

A URL added without an entry here fails ``test_every_url_is_in_the_sweep``, so the sweep stays
complete. Django's admin and allauth are swept as groups (``THIRD_PARTY``), with their own
expectations. Outside Django's resolver: static files (/static/, served by whitenoise's
middleware, public), the MCP server (/mcp) and the proxy (/v1/), ASGI apps beside Django
(config/routing.py) that tests/api/test_mcp.py and test_proxy.py cover.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import pytest
from django.contrib.auth.views import redirect_to_login
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from accounts.models import ApiToken
from conversations.extraction.reconcile import ACTOR_LABEL as EXTRACTION
from conversations.models import Conversation, ExtractionRun, Message
from imports.models import Import
from memories.models import Memory, Scope, Status
from memories.services import memory_create, memory_delete
from teams.models import Invitation, Membership, Project, Team
from tests.conftest import client_for

pytestmark = pytest.mark.django_db

Objects = dict[str, Any]
Body = Callable[[Objects], dict[str, Any]]

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


@dataclass(frozen=True)
class Route:
    """What one URL name answers, and to whom."""

    methods: tuple[str, ...]
    # URL argument → the key of the owner's object in ``objects`` (the fixture below).
    args: Mapping[str, str] = field(default_factory=dict)
    # Why anyone may reach it, signed in or not; empty: only a signed-in user (or a token).
    public: str = ""
    # The URL arguments naming a team's object on which a viewer is refused (403).
    viewer_args: Mapping[str, str] | None = None
    # Acts on the list the user came from (``next``): a project's list for the stranger (404)
    # and viewer (403) checks, as the project's memory page sends it.
    on_project_list: bool = False
    # The API's JSON body, so that a refusal is about who asks, not about what was sent.
    body: Body | None = None
    # Checks this route fails today (CHECKS' keys) → why: expected failures until fixed.
    known_bugs: Mapping[str, str] = field(default_factory=dict)


# The checks below, by the name ``known_bugs`` gives them.
CHECKS = ("anonymous", "public", "method", "stranger", "viewer")


MEMORY = {"memory_id": "memory"}
PROJECT_MEMORY = {"memory_id": "project_memory"}
PENDING = {"memory_id": "pending_memory"}
PENDING_PROJECT = {"memory_id": "pending_project_memory"}
TRASHED = {"memory_id": "trashed_memory"}
TRASHED_PROJECT = {"memory_id": "trashed_project_memory"}
TEAM = {"slug": "team"}
PROJECT = {"slug": "project"}
IMPORT = {"import_id": "import"}
TOKEN = {"token_id": "token"}
CONVERSATION = {"conversation_id": "conversation"}

GET, POST, GET_POST = ("GET",), ("POST",), ("GET", "POST")


def _patch(objects: Objects) -> dict[str, Any]:
    return {"revision": objects["memory_revision"], "content": "Changed"}


def _messages(objects: Objects) -> dict[str, Any]:
    return {"messages": [{"external_id": "m-new", "role": "user", "content": "Hello"}]}


ROUTES: dict[str, Route] = {
    # Public pages
    "home": Route(GET, public="the landing page (a signed-in user is sent to their memories)"),
    "healthz": Route(GET, public="load balancers' health check; details only for staff"),
    "team-invitation": Route(
        GET_POST,
        {"token": "invitation_token"},
        public="the link in an invitation email: its secret token is the credential",
    ),
    "theme-set": Route(POST, public="the header's colour theme, kept in a cookie before sign-in"),
    # My data and imports
    "my-data": Route(GET),
    "my-data-export": Route(GET),
    "my-data-erase": Route(POST),
    "imports": Route(GET_POST),
    "import-detail": Route(GET, IMPORT),
    "import-start": Route(POST, IMPORT),
    "import-undo": Route(POST, IMPORT),
    "import-resume": Route(POST, IMPORT),
    "import-discard": Route(POST, IMPORT),
    # Tokens, privacy switch, access log
    "token-list": Route(GET),
    "token-create": Route(POST),
    "token-revoke": Route(GET_POST, TOKEN),
    "token-pause": Route(POST, TOKEN),
    "token-resume": Route(POST, TOKEN),
    "privacy-pause": Route(POST),
    "privacy-resume": Route(POST),
    "access-list": Route(GET),
    "recall-preview": Route(GET),
    "account": Route(GET),
    # Teams and projects
    "team-list": Route(GET),
    "team-create": Route(POST),
    "team-detail": Route(GET, TEAM),
    "team-leave": Route(GET_POST, TEAM),
    "team-invite": Route(POST, TEAM, viewer_args=TEAM),
    "team-invitation-revoke": Route(
        POST,
        {"slug": "team", "invitation_id": "invitation"},
        viewer_args={"slug": "team", "invitation_id": "invitation"},
    ),
    "team-member-role": Route(
        POST,
        {"slug": "team", "member_id": "membership"},
        viewer_args={"slug": "team", "member_id": "membership"},
    ),
    "team-member-remove": Route(
        POST,
        {"slug": "team", "member_id": "membership"},
        viewer_args={"slug": "team", "member_id": "membership"},
    ),
    "project-create": Route(POST, TEAM, viewer_args=TEAM),
    "project-detail": Route(GET, PROJECT),
    "project-rename": Route(POST, PROJECT, viewer_args=PROJECT),
    "project-archive": Route(POST, PROJECT, viewer_args=PROJECT),
    # Memory files, personal and per project
    "memory-files": Route(GET),
    "memory-files-export": Route(GET),
    "memory-files-preview": Route(POST),
    "memory-files-confirm": Route(POST),
    "memory-files-undo": Route(POST),
    "project-files": Route(GET, PROJECT),
    "project-files-export": Route(GET, PROJECT),
    "project-files-preview": Route(POST, PROJECT, viewer_args=PROJECT),
    "project-files-confirm": Route(POST, PROJECT, viewer_args=PROJECT),
    "project-files-undo": Route(POST, PROJECT, viewer_args=PROJECT),
    # Review queue and extraction notices
    "review-list": Route(GET),
    "review-bulk": Route(POST),
    "review-accept": Route(POST, PENDING, viewer_args=PENDING_PROJECT),
    "review-edit": Route(POST, PENDING, viewer_args=PENDING_PROJECT),
    "review-reject": Route(POST, PENDING, viewer_args=PENDING_PROJECT),
    "extraction-notice-undo": Route(POST, {"batch": "extraction_batch"}),
    "extraction-notice-dismiss": Route(POST),
    # Conversations
    "conversation-list": Route(GET),
    "conversation-delete-all": Route(GET_POST),
    "conversation-detail": Route(GET, CONVERSATION),
    "conversation-delete": Route(GET_POST, CONVERSATION),
    # Memories
    "memory-list": Route(GET),
    "memory-add": Route(POST, on_project_list=True),
    "memory-bulk": Route(POST, on_project_list=True),
    "memory-clear": Route(GET_POST, on_project_list=True),
    "memory-undo": Route(POST),
    "memory-empty-trash": Route(GET_POST, on_project_list=True),
    "memory-settings": Route(POST),
    "memory-edit": Route(GET_POST, MEMORY, viewer_args=PROJECT_MEMORY),
    "memory-delete": Route(POST, MEMORY, viewer_args=PROJECT_MEMORY),
    "memory-restore": Route(POST, TRASHED, viewer_args=TRASHED_PROJECT),
    "memory-purge": Route(GET_POST, TRASHED, viewer_args=TRASHED_PROJECT),
    "memory-pin": Route(POST, MEMORY, viewer_args=PROJECT_MEMORY),
    "memory-review": Route(POST, PENDING, viewer_args=PENDING_PROJECT),
    "memory-history": Route(GET, MEMORY),
    "memory-evidence": Route(GET, MEMORY),
    "project-memories": Route(GET, PROJECT),
    "project-activity": Route(GET, PROJECT),
    # The JSON API
    "api:openapi-json": Route(GET, public="the API's schema, for client generators"),
    "api:openapi-view": Route(GET, public="the API's documentation page"),
    "api:api-root": Route(METHODS, public="ninja's root of the API: 404 JSON whatever the method"),
    "api-not-found": Route(METHODS, public="any other /api/v1/ path: 404 JSON whatever the method"),
    "api:me": Route(GET),
    "api:conversation_create": Route(POST, body=lambda objects: {"external_id": "chat-new"}),
    "api:conversation_detail": Route(GET, CONVERSATION),
    "api:messages_add": Route(POST, CONVERSATION, body=_messages),
    "api:conversation_end": Route(POST, CONVERSATION),
    "api:conversation_summary": Route(
        POST, CONVERSATION, body=lambda objects: {"summary": "## Goal\nA summary."}
    ),
    "api:conversation_extract": Route(POST, CONVERSATION),
    "api:extraction_run_detail": Route(GET, {"run_id": "run"}),
    "api:memory_list": Route(GET),
    "api:memory_create": Route(POST, body=lambda objects: {"content": "A new memory"}),
    "api:memory_search": Route(GET),
    "api:memory_stats": Route(GET),
    "api:memory_get": Route(GET, MEMORY),
    "api:memory_update": Route(("PATCH",), MEMORY, viewer_args=PROJECT_MEMORY, body=_patch),
    "api:memory_delete": Route(("DELETE",), MEMORY, viewer_args=PROJECT_MEMORY),
    "api:memory_restore": Route(POST, TRASHED, viewer_args=TRASHED_PROJECT),
    "api:memory_history": Route(GET, MEMORY),
    "api:preview": Route(POST, body=lambda objects: {"message": "What do I like?"}),
    "api:embeddings": Route(GET),
    "api:command": Route(POST, body=lambda objects: {"command": "/memories"}),
    "api:command_undo": Route(POST, body=lambda objects: {"undo_token": str(uuid.uuid4())}),
    "api:import_create": Route(POST),
    "api:import_list": Route(GET),
    "api:import_detail": Route(GET, IMPORT),
    "api:import_discard": Route(("DELETE",), IMPORT),
    "api:import_start": Route(POST, IMPORT, body=lambda objects: {}),
    "api:import_undo": Route(POST, IMPORT),
    "api:import_resume": Route(POST, IMPORT),
}

# Apps whose URLs are theirs, swept as a group: why, and how each is checked below.
THIRD_PARTY = {
    "admin": "Django's admin: staff only, behind its own log-in page (anonymous → /admin/login/)",
    "allauth": "allauth's sign-up, log-in and password pages: public by nature, never a 500",
    "i18n": "Django's set_language: public, the language cookie is set before sign-in",
}
# allauth's pages about the signed-in account itself: anonymous → log-in.
ALLAUTH_ACCOUNT_PAGES = {
    "account_email",
    "account_change_password",
    "account_set_password",
    "account_reauthenticate",
}


# The resolver --------------------------------------------------------------------------


@dataclass(frozen=True)
class Resolved:
    key: str  # the URL name, namespaced ("api:me"); the pattern when it has no name
    pattern: str
    callback_module: str


def resolved_urls(
    resolver: URLResolver | None = None, prefix: str = "", namespace: str = ""
) -> Iterator[Resolved]:
    """Every URL pattern the project resolves, walking included URL confs (ninja's too)."""
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from resolved_urls(entry, prefix + str(entry.pattern), inner)
        elif isinstance(entry, URLPattern):
            pattern = prefix + str(entry.pattern)
            key = f"{namespace}{entry.name}" if entry.name else pattern
            yield Resolved(key, pattern, getattr(entry.callback, "__module__", ""))


def third_party_group(url: Resolved) -> str | None:
    if url.key.startswith("admin:") or url.pattern.startswith("admin/"):
        return "admin"
    if url.callback_module.startswith("allauth."):
        return "allauth"
    if url.callback_module == "django.views.i18n":
        return "i18n"
    return None


def test_every_url_is_in_the_sweep() -> None:
    urls = list(resolved_urls())
    ours = {url.key for url in urls if third_party_group(url) is None}
    missing = sorted(ours - ROUTES.keys())
    assert not missing, f"URLs without a sweep entry in ROUTES: {missing}"
    stale = sorted(ROUTES.keys() - ours)
    assert not stale, f"ROUTES entries no URL has any more: {stale}"
    groups = {third_party_group(url) for url in urls} - {None}
    assert groups == THIRD_PARTY.keys()
    unknown = {
        name: bugs
        for name, route in ROUTES.items()
        if (bugs := set(route.known_bugs) - set(CHECKS))
    }
    assert not unknown, f"known_bugs names checks that do not exist: {unknown}"


# The objects URLs name: the owner's, in a team with a viewer ---------------------------


@pytest.fixture
def objects(alice: Any, bob: Any, vera: Any, team: Team, project: Project) -> Objects:
    """alice's objects of every kind a URL names (bob is a member, vera a viewer)."""

    def memory(**fields: Any) -> Memory:
        return memory_create(owner=alice, content="Prefers tea", actor=alice, **fields)

    def trashed(**fields: Any) -> Memory:
        return memory_delete(memory=memory(**fields), actor=alice)

    personal = memory()
    conversation = Conversation.objects.create(owner=alice, external_id="chat-1")
    Message.objects.create(
        conversation=conversation, role="user", content="I like tea", external_id="m1", position=1
    )
    extraction_batch = uuid.uuid4()
    memory_create(owner=alice, content="Likes tea", actor_label=EXTRACTION, batch=extraction_batch)
    token, _secret = ApiToken.issue(user=alice, name="chat app")
    return {
        "memory": personal.pk,
        "memory_revision": personal.revision,
        "project_memory": memory(scope=Scope.PROJECT, project=project).pk,
        "pending_memory": memory(status=Status.PENDING).pk,
        "pending_project_memory": memory(
            scope=Scope.PROJECT, project=project, status=Status.PENDING
        ).pk,
        "trashed_memory": trashed().pk,
        "trashed_project_memory": trashed(scope=Scope.PROJECT, project=project).pk,
        "conversation": conversation.pk,
        "run": ExtractionRun.objects.create(conversation=conversation, trigger="manual").pk,
        "extraction_batch": extraction_batch,
        "token": token.pk,
        "import": Import.objects.create(owner=alice, source="chatgpt").pk,
        "team": team.slug,
        "project": project.slug,
        "membership": Membership.objects.get(team=team, user=bob).pk,
        "invitation": Invitation.objects.create(
            team=team, email="dora@example.com", invited_by=alice
        ).pk,
        "invitation_token": Invitation.objects.create(
            team=team, email="erin@example.com", invited_by=alice
        ).token,
    }


# The objects that are alice's alone (not shared with her team).
PERSONAL_OBJECTS = {
    "memory",
    "pending_memory",
    "trashed_memory",
    "conversation",
    "run",
    "extraction_batch",
    "token",
    "import",
}


def url_of(name: str, args: Mapping[str, str], objects: Objects) -> str:
    if name == "api-not-found":
        return "/api/v1/no-such-endpoint"
    return reverse(name, kwargs={arg: objects[key] for arg, key in args.items()})


def is_api(name: str) -> bool:
    return name.startswith("api:") or name == "api-not-found"


def client_of(user: Any, name: str) -> Client:
    """A page's client has the user's session; the API's sends a token of theirs."""
    if is_api(name):
        _token, secret = ApiToken.issue(user=user, name="sweep")
        return Client(headers={"Authorization": f"Bearer {secret}"})
    return client_for(user)


def send(client: Client, name: str, method: str, url: str, objects: Objects) -> Any:
    """A request as its callers send it: the API's as JSON (with the route's body, so that
    a refusal is about who asks), a page's POST as a form."""
    if is_api(name) and method != "GET":
        body = ROUTES[name].body
        payload = json.dumps(body(objects) if body else {})
        return client.generic(method, url, payload, content_type="application/json")
    if method == "POST":
        return client.post(url, {})
    return client.generic(method, url)


def methods_at(name: str) -> set[str]:
    """What the URL answers: ninja serves several operations (names) at one path."""
    pattern = {url.key: url.pattern for url in resolved_urls()}
    return {
        method
        for other, route in ROUTES.items()
        if pattern[other] == pattern[name]
        for method in route.methods
    }


def routes(check: str, selected: Callable[[Route], bool]) -> list[Any]:
    """The routes ``check`` applies to; those it fails today expected to fail (strictly)."""
    return [
        pytest.param(
            name,
            id=name,
            marks=[pytest.mark.xfail(reason=route.known_bugs[check], strict=True)]
            if check in route.known_bugs
            else [],
        )
        for name, route in ROUTES.items()
        if selected(route)
    ]


def describe(response: Any) -> str:
    return f"{response.status_code} {response.get('Location', '')} {response.content[:200]!r}"


# The sweep -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", routes("anonymous", lambda route: not route.public))
def test_anonymous_is_sent_to_log_in(name: str, objects: Objects) -> None:
    route = ROUTES[name]
    url = url_of(name, route.args, objects)
    for method in route.methods:
        response = send(Client(), name, method, url, objects)
        if is_api(name):
            assert response.status_code == 401, describe(response)
            assert response.json()["error"]["code"] == "UNAUTHORIZED"
        else:
            assert response.status_code == 302, describe(response)
            assert response["Location"] == redirect_to_login(url)["Location"]


@pytest.mark.parametrize("name", routes("public", lambda route: bool(route.public)))
def test_public_routes_answer_anyone(name: str, objects: Objects) -> None:
    route = ROUTES[name]
    url = url_of(name, route.args, objects)
    for method in route.methods:
        response = send(Client(), name, method, url, objects)
        # /healthz answers 503 when a component is down (here: no worker runs): not a crash.
        assert response.status_code != 500, describe(response)
        assert not response.get("Location", "").startswith(reverse("account_login"))


@pytest.mark.parametrize("name", routes("method", lambda route: set(route.methods) != set(METHODS)))
def test_a_wrong_method_is_405(name: str, alice: Any, objects: Objects) -> None:
    route = ROUTES[name]
    url = url_of(name, route.args, objects)
    client = client_of(alice, name)
    for method in sorted(set(METHODS) - methods_at(name)):
        response = send(client, name, method, url, objects)
        assert response.status_code == 405, f"{method}: {describe(response)}"
        if is_api(name):
            assert response.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


def _project_list(objects: Objects) -> str:
    return "?" + urlencode({"next": reverse("project-memories", args=[objects["project"]])})


@pytest.mark.parametrize(
    "name",
    routes(
        "stranger",
        lambda route: not route.public and (bool(route.args) or route.on_project_list),
    ),
)
def test_another_users_object_is_not_found(
    name: str, bob: Any, charlie: Any, objects: Objects
) -> None:
    """charlie shares nothing with alice; bob, her team mate, must not reach her own things."""
    route = ROUTES[name]
    url = url_of(name, route.args, objects)
    if route.on_project_list:
        url += _project_list(objects)
    strangers = [charlie]
    if set(route.args.values()) <= PERSONAL_OBJECTS and not route.on_project_list:
        strangers.append(bob)
    for stranger in strangers:
        client = client_of(stranger, name)
        for method in route.methods:
            response = send(client, name, method, url, objects)
            assert response.status_code == 404, f"{stranger} {method}: {describe(response)}"


@pytest.mark.parametrize(
    "name", routes("viewer", lambda route: route.viewer_args is not None or route.on_project_list)
)
def test_a_viewer_is_refused_what_members_do(name: str, vera: Any, objects: Objects) -> None:
    route = ROUTES[name]
    url = url_of(name, route.viewer_args or route.args, objects)
    if route.on_project_list:
        url += _project_list(objects)
    client = client_of(vera, name)
    for method in route.methods:
        response = send(client, name, method, url, objects)
        assert response.status_code == 403, f"{method}: {describe(response)}"


# The third-party groups ------------------------------------------------------------------


def _placeholder_url(url: Resolved, values: Mapping[str, str]) -> str:
    """The URL reversed with a placeholder for each of its arguments."""
    names = re.findall(r"<(?:\w+:)?(\w+)>", url.pattern)
    return reverse(url.key, kwargs={name: values[name] for name in names})


def _admin_urls() -> list[str]:
    placeholders = {"object_id": "1", "content_type_id": "1", "id": "1", "app_label": "auth"}
    return [
        _placeholder_url(url, placeholders)
        for url in resolved_urls()
        if third_party_group(url) == "admin" and url.key.startswith("admin:")
    ]


def test_the_admin_is_for_staff_only(alice: Any) -> None:
    login = reverse("admin:login")
    logout = reverse("admin:logout")
    for who in (Client(), client_for(alice)):
        for url in _admin_urls():
            if url in (login, logout):
                continue
            response = who.get(url)
            assert response.status_code == 302, f"{url}: {describe(response)}"
            assert response["Location"].startswith(login), url


def test_allauth_pages_answer_without_error() -> None:
    placeholders = {"key": "no-such-key", "uidb36": "0"}
    for url in resolved_urls():
        if third_party_group(url) != "allauth":
            continue
        response = Client().get(_placeholder_url(url, placeholders))
        assert response.status_code < 500, f"{url.key}: {describe(response)}"
        if url.key in ALLAUTH_ACCOUNT_PAGES:
            assert response.status_code == 302, url.key
            assert response["Location"].startswith(reverse("account_login")), url.key


def test_set_language_is_public() -> None:
    response = Client().post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    assert response.status_code == 302
