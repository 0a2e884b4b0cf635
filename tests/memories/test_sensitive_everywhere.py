"""No way in stores a secret: chat messages (and the memories extracted from them),
/remember, the API and the pages. Only-a-secret is refused; a secret among other
words is redacted. Ordinary sentences about passwords and pins are left alone."""

from __future__ import annotations

from typing import Any

import pytest

from conversations.models import Message
from memories.models import Memory
from memories.sensitive import contains_sensitive, only_secret, redact, screen
from tests.conftest import client_for
from tests.recall_helpers import ApiClient

pytestmark = pytest.mark.django_db

# (message, the secret in it)
SECRETS = [
    ("Always use password hunter7 for staging", "hunter7"),
    ("The pin 482913 opens the office door", "482913"),
    ("my AWS key is AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("Our staging database password is Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("The wifi password: coffee-lover-2024", "coffee-lover-2024"),
    ("Set the admin passcode to 9911 before the demo", "9911"),
    ("CI uses the token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "ghp_aBcDeFgHiJkLmNoPqRsTuV"),
    ("The OpenAI key sk-proj-abcdefghijklmnopqrstuvwxyz123456 is in the vault", "sk-proj-abc"),
    ("Connect with postgres://admin:s3cretpass@db.internal:5432/app", "s3cretpass"),
    ("My card number is 4111 1111 1111 1111", "4111 1111 1111 1111"),
    ("The Slack bot token is xoxb-1234567890-abcdefghij", "xoxb-1234567890"),
    ("pin code 7731 for the safe in the server room", "7731"),
    ("Remember that my bank password hunter2024 must never change", "hunter2024"),
    ("The root password for prod-db is Zx9!mQ2#", "Zx9!mQ2#"),
    ("I log in with passphrase 'correct horse battery staple'", "correct horse battery"),
    ("api_key = 9f8e7d6c5b4a39281706 for the weather service", "9f8e7d6c5b4a39281706"),
    ("Call it with Bearer abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123"),
    ("My SSN is 123-45-6789", "123-45-6789"),
    ("The new router password set to Gr33nTea!", "Gr33nTea!"),
    ("习惯用密码 abc123 登录测试环境", "abc123"),
    ("服务器的口令 tiger88 别忘了", "tiger88"),
    ("数据库密码设为 P@ssw0rd!", "P@ssw0rd!"),
    ("我的银行卡密码是 135790", "135790"),
    ("WiFi 密码：sunshine2024", "sunshine2024"),
    ("生产环境的密钥为 sk-abcdefghijklmnopqrstuvwxyz123456", "sk-abcdefghijklmnopqrstuvwxyz"),
    ("我的身份证号是 11010519491231002X", "11010519491231002X"),
    ("门禁 PIN码 246810，每周一换", "246810"),
    ("把测试环境的密码改成 qwerty789 了", "qwerty789"),
    # Said without naming a password, a card or an ID.
    ("Got the mesh working. The new one for the router is Pierogi!Tuesday88", "Pierogi!Tuesday"),
    ("My parents' new alarm: the master code they picked is 7305.", "7305"),
    ("家里新装了小米路由器，新的那串是 maomao@2024xm，写这儿省得我忘了。", "maomao@2024xm"),
    ("All my subscriptions go on my Monzo card 5355 2210 4471 9088", "5355 2210 4471 9088"),
    ("每个月发工资后转3000到定期，卡号 6225 8821 4073 9654", "6225 8821 4073 9654"),
    ("租房申请：姓名林晓，330106199205183420，紧急联系人是妹妹", "330106199205183420"),
]

ORDINARY = [
    "I changed my password policy docs",
    "pin the memory",
    "Please pin this note to the top",
    "The password reset page needs a new design",
    "Use a password manager for every account",
    "The PIN pad at the door is broken",
    "The password is required on the login form",
    "Order 1234 shipped on Monday",
    "Deploys go out on Tuesdays at 14:00",
    "The new one is v2.3 of the API",
    "The new one is much longer",
    "新的是2024年买的",
    "密码策略需要更新",
    "我们明天讨论密钥轮换的流程",
    "I prefer pytest over unittest",
]


@pytest.mark.parametrize("text,secret", SECRETS)
def test_the_filter_finds_each_secret(text: str, secret: str) -> None:
    assert contains_sensitive(text)
    assert secret not in redact(text)[0]


@pytest.mark.parametrize("text", ORDINARY)
def test_no_false_positives(text: str) -> None:
    assert not contains_sensitive(text)
    assert screen(text) == text


def test_only_a_secret_versus_a_secret_among_words() -> None:
    assert only_secret("my AWS key is AKIAIOSFODNN7EXAMPLE")
    assert only_secret("password: hunter7")
    assert only_secret("密码是 135790")
    assert not only_secret("Always use password hunter7 for staging")
    assert redact("Always use password hunter7 for staging")[0] == (
        "Always use [redacted password] for staging"
    )
    assert redact("key AKIAIOSFODNN7EXAMPLE")[0] == "key [redacted AWS key]"


def test_no_secret_is_stored_from_messages_commands_or_the_api(alice: Any) -> None:
    api = ApiClient(alice)
    conversation = api.post("/conversations", {"external_id": "chat"}).json()["id"]
    messages = [
        {"external_id": f"m{index}", "role": "user", "content": text}
        for index, (text, _secret) in enumerate(SECRETS)
    ]
    assert (
        api.post(f"/conversations/{conversation}/messages", {"messages": messages}).status_code
        == 200
    )
    assert api.post(f"/conversations/{conversation}/end").status_code == 202
    refused = 0
    for text, _secret in SECRETS:
        command = api.post("/commands", {"command": f"/remember {text}"})
        created = api.post("/memories", {"content": text})
        for response in (command, created):
            if response.status_code == 422:
                assert response.json()["error"]["code"] == "SENSITIVE_CONTENT"
                refused += 1
            else:
                assert response.status_code in (200, 201), response.content
    assert refused >= 2
    stored = [*Memory.objects.values_list("content", flat=True)]
    stored += [*Message.objects.values_list("content", flat=True)]
    assert len(stored) > len(SECRETS)
    for text, secret in SECRETS:
        leaks = [value for value in stored if secret in value]
        assert not leaks, (text, leaks)
    assert Message.objects.get(external_id="m0").content == (
        "Always use [redacted password] for staging"
    )


def test_a_secret_only_command_is_refused_clearly(alice: Any) -> None:
    response = ApiClient(alice).post(
        "/commands", {"command": "/remember my AWS key is AKIAIOSFODNN7EXAMPLE"}
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "SENSITIVE_CONTENT" and "only a secret" in error["message"]
    assert not Memory.objects.exists()


def test_editing_through_the_api_redacts(alice: Any) -> None:
    api = ApiClient(alice)
    memory = api.post("/memories", {"content": "Staging login"}).json()
    response = api.patch(
        f"/memories/{memory['id']}",
        {"revision": memory["revision"], "content": "Staging login uses pin 482913"},
    )
    assert response.json()["content"] == "Staging login uses [redacted password]"


def test_pages_refuse_a_secret_and_redact_one_in_a_sentence(alice: Any) -> None:
    client = client_for(alice)
    response = client.post(
        "/settings/memories/add",
        {"content": "password: hunter7", "kind": "fact", "where": "personal"},
    )
    assert "This is only a secret" in response.content.decode()
    assert not Memory.objects.exists()
    client.post(
        "/settings/memories/add",
        {"content": "Always use password hunter7 for staging", "kind": "fact", "where": "personal"},
    )
    assert Memory.objects.get().content == "Always use [redacted password] for staging"
