"""Both languages everywhere: the nav's language menu, a saved choice, a complete catalog,
one register (你) in Chinese, allauth's pages included."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core import mail
from django.core.management import call_command
from django.test import Client

from accounts.models import MemorySettings
from tests.conftest import client_for

ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}


def test_every_page_has_the_language_menu_in_the_nav(alice: Any) -> None:
    client = client_for(alice)
    for url in ["/settings/tokens/", "/teams/", "/review/", "/settings/memories"]:
        html = client.get(url).content.decode()
        assert 'id="nav-language"' in html, url
        assert 'action="/i18n/setlang/"' in html, url
    visitor = Client().get("/accounts/login/").content.decode()
    assert 'id="nav-language"' in visitor


def test_the_language_chosen_is_saved_on_the_account_and_comes_back_at_log_in(
    alice: Any,
) -> None:
    client = client_for(alice)
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/teams/"})
    assert MemorySettings.for_user(alice).language == "zh-hans"
    assert "团队" in client.get("/teams/").content.decode()

    # Another browser, English by its header and no cookie: logging in brings Chinese back.
    other = Client()
    other.post(
        "/accounts/login/", {"login": "alice@example.com", "password": "correct-horse-battery"}
    )
    page = other.get("/teams/", headers={"Accept-Language": "en"})
    assert page["Content-Language"] == "zh-hans"


def test_a_visitor_s_choice_is_a_cookie() -> None:
    client = Client()
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/accounts/login/"})
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    assert client.get("/accounts/login/")["Content-Language"] == "zh-hans"


def _untranslated(po: Path) -> list[str]:
    """msgids with an empty msgstr or marked fuzzy (obsolete entries aside)."""
    missing = []
    for block in po.read_text().split("\n\n")[1:]:
        lines = [line for line in block.splitlines() if not line.startswith("#~")]
        if not any(line.startswith("msgid ") for line in lines):
            continue
        text = "\n".join(lines)
        msgid = re.search(r'^msgid ((?:".*"\n?)+)', text, re.M)
        label = msgid.group(1).strip() if msgid else text
        if any(line.startswith("#,") and "fuzzy" in line for line in lines):
            missing.append(label)
            continue
        for match in re.finditer(r'^msgstr(?:\[\d+\])? ((?:".*"\n?)+)', text, re.M):
            if "".join(re.findall(r'"(.*)"', match.group(1))) == "":
                missing.append(label)
    return missing


def test_every_string_of_the_app_is_translated(monkeypatch: Any) -> None:
    """makemessages picks up every string of the app into its catalog; none is left empty or
    fuzzy. The catalog is put back as it was after, so running the tests changes no file."""
    catalog = settings.BASE_DIR / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
    original = catalog.read_bytes()
    monkeypatch.chdir(settings.BASE_DIR)
    try:
        call_command(
            "makemessages",
            locale=["zh_Hans"],
            ignore_patterns=[".venv", "var", "tests", "staticfiles", "test-artifacts"],
            verbosity=0,
        )
        missing = _untranslated(catalog)
    finally:
        catalog.write_bytes(original)
    assert missing == []
    # The catalog the app serves compiles.
    compiled = subprocess.run(
        ["msgfmt", "--check", "-o", "/dev/null", str(catalog)], capture_output=True, text=True
    )
    assert compiled.returncode == 0, compiled.stderr


def test_chinese_uses_one_register_you_never_nin_in_the_catalog() -> None:
    po = (settings.BASE_DIR / "locale/zh_Hans/LC_MESSAGES/django.po").read_text()
    assert "您" not in po


def test_pin_is_translated(alice: Any) -> None:
    from django.utils import translation

    with translation.override("zh-hans"):
        assert translation.gettext("Pin") != "Pin"
        assert translation.gettext("Unpin") != "Unpin"


def test_allauth_pages_speak_to_you_not_nin(alice: Any, db: None) -> None:
    """Sign-up, log-in, password reset and its steps, email confirmation: 你, never 您."""
    client = Client(headers=ZH)
    pages = {
        url: client.get(url)
        for url in [
            "/accounts/login/",
            "/accounts/signup/",
            "/accounts/password/reset/",
            "/accounts/password/reset/done/",
            "/accounts/confirm-email/",
        ]
    }
    wrong = client.post("/accounts/login/", {"login": "alice@example.com", "password": "nope"})
    pages["login error"] = wrong
    short = client.post(
        "/accounts/signup/",
        {"email": "alice@example.com", "password1": "abc", "password2": "abd"},
    )
    pages["signup errors"] = short
    client.post("/accounts/password/reset/", {"email": "alice@example.com"})
    link = re.search(r"/accounts/password/reset/key/\S+", str(mail.outbox[-1].body))
    assert link
    key_page = client.get(link.group(0), follow=True)
    pages["reset key"] = key_page
    pages["reset key bad"] = client.get("/accounts/password/reset/key/1-bad-key/")
    pages["confirm bad"] = client.get("/accounts/confirm-email/not-a-key/")
    for name, response in pages.items():
        html = response.content.decode()
        assert response.status_code in (200, 404), name
        assert "您" not in html, (name, re.findall(r".{0,30}您.{0,30}", html))
        assert 'lang="zh-hans"' in html, name
    # The reset email, sent in the reader's language, says 你 too.
    assert "您" not in str(mail.outbox[-1].body)


def test_auth_pages_are_styled_like_the_app(db: None) -> None:
    html = Client().get("/accounts/signup/").content.decode()
    assert 'class="container auth"' in html
    assert "favicon.svg" in html
    # Each field: a label above its input, the password rules as a short list of help.
    assert html.count('class="field') >= 3
    assert 'class="help" id="id_password1_helptext"' in html
    assert "<ul>" in html.split('id="id_password1_helptext"')[1].split("</div>")[0]


def test_signup_errors_are_shown_next_to_their_field(db: None) -> None:
    html = (
        Client()
        .post("/accounts/signup/", {"email": "x@example.com", "password1": "a", "password2": "b"})
        .content.decode()
    )
    field = html.split('<div class="field has-error">')
    assert len(field) >= 2
    assert 'class="errorlist' in field[1].split("</div>")[0]


def test_english_wording_is_one_and_grammatical(alice: Any, team: Any) -> None:
    """allauth's "Sign In" reads "Log in" as the nav does; a role reads as a sentence
    (issue 44 item 13)."""
    login = Client().get("/accounts/login/").content.decode()
    assert "Sign In" not in login and "Sign Up" not in login
    page = client_for(alice).get(f"/teams/{team.slug}/").content.decode()
    assert "Your role in this team: owner." in page
    zh = client_for(alice).get(f"/teams/{team.slug}/", headers=ZH).content.decode()
    assert "你在这个团队中的角色：所有者。" in zh
