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
