from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client, override_settings

from accounts.models import ApiToken, MemorySettings
from tests.conftest import client_for

SIGNUP = {
    "email": "dora@example.com",
    "password1": "a-long-Pass-phrase-42",
    "password2": "a-long-Pass-phrase-42",
}


@pytest.mark.django_db
def test_sign_up_creates_the_user_with_memory_off_by_default() -> None:
    response = Client().post("/accounts/signup/", SIGNUP)
    assert response.status_code == 302
    user = get_user_model().objects.get(email="dora@example.com")
    memory_settings = MemorySettings.for_user(user)
    assert memory_settings.memory_enabled is False  # privacy first
    assert memory_settings.auto_extract is True


@pytest.mark.django_db
@override_settings(MEMORY_ENABLED_BY_DEFAULT=True)
def test_the_server_setting_turns_memory_on_for_new_users() -> None:
    Client().post("/accounts/signup/", SIGNUP)
    user = get_user_model().objects.get(email="dora@example.com")
    assert MemorySettings.for_user(user).memory_enabled is True


def test_log_in_with_email_and_password(alice: Any) -> None:
    client = Client()
    response = client.post(
        "/accounts/login/", {"login": "alice@example.com", "password": "correct-horse-battery"}
    )
    assert response.status_code == 302
    home = client.get("/")
    assert home.status_code == 302 and home["Location"] == "/settings/memories"
    assert client.get("/settings/memories").status_code == 200


def test_wrong_password_re_renders_the_form_with_an_error(alice: Any) -> None:
    response = Client().post("/accounts/login/", {"login": "alice@example.com", "password": "nope"})
    assert response.status_code == 200
    assert "not correct" in response.content.decode()


def test_password_reset_sends_an_email(alice: Any) -> None:
    Client().post("/accounts/password/reset/", {"email": "alice@example.com"})
    assert len(mail.outbox) == 1
    assert "/accounts/password/reset/key/" in mail.outbox[0].body


def test_tokens_page_requires_login(db: None) -> None:
    response = Client().get("/settings/tokens/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_create_a_token_shows_the_secret_once_and_stores_a_hash(alice: Any) -> None:
    client = client_for(alice)
    response = client.post("/settings/tokens/new", {"name": "Laptop"})
    # Post, then redirect: reloading the page that shows the secret cannot make a second token.
    assert response.status_code == 302 and response["Location"].startswith("/settings/tokens/")
    body = client.get(response["Location"]).content.decode()
    token = ApiToken.objects.get(user=alice)
    secret = body.split('id="new-token">')[1].split("<")[0]
    assert secret.startswith("mem_") and token.name == "Laptop"
    assert token.token_hash == ApiToken.hash_secret(secret) and secret not in token.token_hash
    assert f"Bearer {secret}" in body  # the connect-your-app snippet, ready to paste
    listing = client.get("/settings/tokens/").content.decode()
    assert "Laptop" in listing and secret not in listing
    assert ApiToken.objects.filter(user=alice).count() == 1


def test_a_token_needs_a_name(alice: Any) -> None:
    response = client_for(alice).post("/settings/tokens/new", {"name": ""})
    assert response.status_code == 400
    assert "This field is required" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_a_token_authenticates_the_api_until_revoked(alice: Any) -> None:
    token, secret = ApiToken.issue(user=alice, name="CLI")
    api = Client()
    response = api.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert response.status_code == 200
    assert response.json()["email"] == "alice@example.com"
    assert response.json()["token_name"] == "CLI"

    client_for(alice).post(f"/settings/tokens/{token.pk}/revoke")
    response = api.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"


def test_nobody_can_revoke_someone_elses_token(alice: Any, charlie: Any) -> None:
    token, _secret = ApiToken.issue(user=alice, name="CLI")
    assert client_for(charlie).post(f"/settings/tokens/{token.pk}/revoke").status_code == 404
    assert client_for(charlie).get(f"/settings/tokens/{token.pk}/revoke").status_code == 404
    token.refresh_from_db()
    assert token.is_active


def test_revoking_asks_for_confirmation_first(alice: Any) -> None:
    token, _secret = ApiToken.issue(user=alice, name="CLI")
    client = client_for(alice)
    listing = client.get("/settings/tokens/").content.decode()
    assert f'href="/settings/tokens/{token.pk}/revoke"' in listing
    confirm = client.get(f"/settings/tokens/{token.pk}/revoke")
    assert confirm.status_code == 200 and "cannot be undone" in confirm.content.decode()
    token.refresh_from_db()
    assert token.is_active
    assert client.post(f"/settings/tokens/{token.pk}/revoke").status_code == 302
    token.refresh_from_db()
    assert not token.is_active


def test_the_account_page_gathers_email_password_sessions_language_theme_and_erasure(
    alice: Any,
) -> None:
    """Issue 44 items 26 and 18: reachable from the menu on every page."""
    client = Client()
    client.post(
        "/accounts/login/", {"login": "alice@example.com", "password": "correct-horse-battery"}
    )
    assert 'href="/settings/account"' in client.get("/settings/tokens/").content.decode()
    page = client.get("/settings/account").content.decode()
    for link in (
        "/accounts/email/",
        "/accounts/password/change/",
        "/accounts/sessions/",
        "/settings/data#erase-title",
        'id="account-language"',
        "data-theme-choice",
    ):
        assert link in page, link
    assert "alice@example.com" in page
    assert "Signed in on 1 browser or device." in page
    sessions = client.get("/accounts/sessions/")
    assert sessions.status_code == 200
    zh = client.get("/settings/account", headers={"Accept-Language": "zh-hans"}).content.decode()
    assert "我的账户" in zh


def test_account_emails_are_signed_with_the_product_name(alice: Any) -> None:
    """Not "Thank you for using 127.0.0.1:8101!" (issue 44 item 18)."""
    Client().post("/accounts/password/reset/", {"email": "alice@example.com"})
    message = mail.outbox[-1]
    assert message.subject.startswith("[memoryapp] ")
    assert "Thank you for using memoryapp!" in str(message.body)
    assert "testserver!" not in str(message.body)
