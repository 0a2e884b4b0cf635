"""Sensitive data that must never become a memory.

API keys and tokens in their common formats, passwords stated in text,
private keys, connection strings with credentials, payment card numbers
(Luhn-checked) and Chinese resident ID numbers (checksum-checked). A
candidate that contains any of them is dropped whole; text sent to an
external LLM is redacted first. Callers count what was dropped; nothing here
keeps or logs the secret itself.
"""

from __future__ import annotations

import re
from datetime import date

REDACTED = "[redacted]"

_SECRET_PATTERNS: dict[str, re.Pattern[str]] = {
    "private key": re.compile(
        r"-----BEGIN (?:[A-Z ]+ )?PRIVATE KEY-----(?:.*?-----END (?:[A-Z ]+ )?PRIVATE KEY-----)?",
        re.DOTALL,
    ),
    "openai key": re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"),
    "github token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    "aws access key": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "slack token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    "google api key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "stripe key": re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}"),
    "memoryapp token": re.compile(r"\bmem_[A-Za-z0-9_-]{30,}"),
    "jwt": re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    "bearer token": re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=-]{20,}", re.IGNORECASE),
    "url credentials": re.compile(
        r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:[^\s@/]+@[^\s]+", re.IGNORECASE
    ),
    "assigned secret": re.compile(
        r"\b(?:api[_ -]?key|access[_ -]?key|secret(?:[_ -]?key)?|auth[_ -]?token|access[_ -]?token|"
        r"client[_ -]?secret|token)\b\s*(?:is|=|:)\s*['\"]?[A-Za-z0-9._~+/=-]{12,}",
        re.IGNORECASE,
    ),
    "password": re.compile(
        r"\b(?:password|passwd|passphrase|pwd|pin)\b(?:\s+(?:for|of|to)\s+[\w.@-]+)?"
        r"\s*(?:is|was|=|:)\s*\S{4,}"
        r"|(?:密码|口令|密钥)(?:是|为|：|:)\s*\S{4,}",
        re.IGNORECASE,
    ),
    "ssn": re.compile(
        r"\b(?:ssn|social security(?: number)?)\b\D{0,20}\d{3}-\d{2}-\d{4}\b", re.IGNORECASE
    ),
}

_CARD = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")
_RESIDENT_ID = re.compile(r"(?<!\d)\d{17}[\dXx](?!\d)")
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def resident_id_valid(number: str) -> bool:
    """A Chinese resident ID (GB 11643): a real birth date and the right check character."""
    try:
        date(int(number[6:10]), int(number[10:12]), int(number[12:14]))
    except ValueError:
        return False
    total = sum(int(char) * weight for char, weight in zip(number[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == number[17].upper()


def _card_numbers(text: str) -> list[re.Match[str]]:
    found = []
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn_valid(digits):
            found.append(match)
    return found


def _spans(text: str) -> list[tuple[str, re.Match[str]]]:
    spans = [
        (name, match)
        for name, pattern in _SECRET_PATTERNS.items()
        for match in pattern.finditer(text)
    ]
    spans.extend(("card number", match) for match in _card_numbers(text))
    spans.extend(
        ("resident id", match)
        for match in _RESIDENT_ID.finditer(text)
        if resident_id_valid(match.group(0))
    )
    return spans


def sensitive_kinds(text: str) -> list[str]:
    """The kinds of sensitive data in ``text`` (never the data itself)."""
    return sorted({name for name, _match in _spans(text)})


def contains_sensitive(text: str) -> bool:
    return bool(_spans(text))


def redact(text: str) -> tuple[str, int]:
    """``text`` with every sensitive span replaced, and how many were replaced."""
    spans = sorted((match.span() for _name, match in _spans(text)), key=lambda span: span[0])
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in reversed(merged):
        text = text[:start] + REDACTED + text[end:]
    return text, len(merged)
