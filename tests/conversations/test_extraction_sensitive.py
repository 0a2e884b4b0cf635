from __future__ import annotations

import pytest

from memories.sensitive import (
    contains_sensitive,
    luhn_valid,
    redact,
    resident_id_valid,
    sensitive_kinds,
)

SECRETS = [
    ("My OpenAI key is sk-proj-abcdefghijklmnopqrstuvwxyz123456", "openai key"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "github token"),
    ("AWS AKIAIOSFODNN7EXAMPLE in prod", "aws access key"),
    ("slack xoxb-1234567890-abcdefghij", "slack token"),
    ("stripe sk_live_abcdefghijklmnop1234", "stripe key"),
    ("use mem_abcdefghijklmnopqrstuvwxyz0123456789 for the API", "memoryapp token"),
    ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz.12345", "bearer token"),
    ("postgres://admin:hunter22@db.example.com/prod", "url credentials"),
    ("api_key = 9f8e7d6c5b4a3f2e1d0c", "assigned secret"),
    ("my password is Tr0ub4dor&3", "password"),
    ("the password for vpn: correct-horse", "password"),
    ("数据库密码是 abc12345", "password"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "private key"),
    ("card 4111 1111 1111 1111 exp 12/29", "card number"),
    ("身份证号 11010519491231002X", "resident id"),
]

NOT_SECRETS = [
    "I prefer Vue over React",
    "The password field must be hidden",
    "Order 1234 5678 9012 3456 shipped",  # fails Luhn
    "ID 110105194912310021 on file",  # wrong check digit
    "The tokenizer splits words",
    "We use sk-learn for models",
]


@pytest.mark.parametrize(("text", "kind"), SECRETS)
def test_sensitive_data_is_found(text: str, kind: str) -> None:
    assert kind in sensitive_kinds(text)
    redacted, count = redact(text)
    assert count >= 1
    assert "[redacted" in redacted


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_ordinary_text_is_not_sensitive(text: str) -> None:
    assert not contains_sensitive(text)


def test_checksums() -> None:
    assert luhn_valid("4111111111111111")
    assert not luhn_valid("4111111111111112")
    assert resident_id_valid("11010519491231002X")
    assert not resident_id_valid("110105194913310028")  # month 13


# (context: the turn before, text, the secret that must not be left)
SECRETS_IN_CONTEXT = [
    ("", "I changed my wifi password, the new one is Brisket4life!", "Brisket4life"),
    ("", "I changed my wifi password. The new one is sunflower.", "sunflower"),
    ("", "My bank PIN? It's 4821.", "4821"),
    ("", "The new password I set is hunter2go.", "hunter2go"),
    ("", "我把wifi密码改了，新的是brisket4life", "brisket4life"),
    ("I think you changed the password? it keeps kicking me out",
     "Oh yeah. It's mia88@example.com and the new one is Brisket4life!", "Brisket4life"),
    ("do you have the admin login?", "yeah it's admin@staging / Kite!Admin2023", "Kite!Admin2023"),
    ("你密码改了没", "改了，新的是wl2023dm", "wl2023dm"),
]  # fmt: skip

# Sentences that mention a password and give no value: nothing redacted.
NO_VALUE_GIVEN = [
    ("", "I forgot my password again."),
    ("", "I forgot my password again, it's so annoying."),
    ("", "I changed my wifi password, the new one is much longer."),
    ("", "I changed the password at 9am, it was 2019 when I last did."),
    ("", "I use a password manager, it's great."),
    ("", "我又忘了密码，是不是该换一个"),
    ("I think you changed the password?", "Yes, I did it on Monday."),
    ("What did you do today?", "It's 4821 steps so far."),
]


@pytest.mark.parametrize(("context", "text", "secret"), SECRETS_IN_CONTEXT)
def test_secrets_given_in_context_are_found(context: str, text: str, secret: str) -> None:
    assert contains_sensitive(text, context)
    redacted, count = redact(text, context)
    assert count >= 1
    assert secret not in redacted
    assert "[redacted password]" in redacted


@pytest.mark.parametrize(("context", "text"), NO_VALUE_GIVEN)
def test_a_password_mentioned_without_a_value_is_left_alone(context: str, text: str) -> None:
    assert not contains_sensitive(text, context)
    assert redact(text, context) == (text, 0)


def test_context_alone_redacts_nothing_in_the_text() -> None:
    assert redact("Thanks, got it.", "my password is hunter22") == ("Thanks, got it.", 0)
