"""Sensitive data that must never be stored: the one filter for every way text comes in.

API keys and tokens in their common formats, passwords and PINs stated in text
(English and Chinese, with or without a verb: "password hunter7", "pin 482913",
"密码设为 …", "口令 …"), private keys, connection strings with credentials, payment
card numbers (Luhn-checked) and Chinese resident ID numbers (checksum-checked).
A secret may also be given in context: a password, PIN or login named first and its
value after ("I changed my wifi password, the new one is Brisket4life!", "密码改了，新的是
…"), in the same text or, for a turn of a conversation, in the turn before it (``context``).

- Extraction drops a candidate that contains any of them; text sent to an external
  LLM is redacted first.
- Stored conversation messages and summaries are redacted at ingestion.
- A memory added or edited (API, pages, /remember, import) is stored redacted;
  one that is only a secret is refused (``screen`` raises SensitiveContent).

Callers count what was dropped; nothing here keeps or logs the secret itself.
"""

from __future__ import annotations

import re
from datetime import date

# Every redaction starts with this ("[redacted password]", "[redacted API key]"…).
REDACTED = "[redacted"

_SECRET_WORD = r"(?:password|passwd|passphrase|passcode|pwd|pin(?:[ -]?code)?)s?"
# Words that follow "password is" in ordinary sentences ("the password is required").
_NOT_A_SECRET = (
    r"(?:required|incorrect|wrong|invalid|correct|expired|missing|needed|changed|reset|set|"
    r"stored|saved|strong|weak|long|short|too|not|the|a|an|in|on|at|of|for|also|still|now|"
    r"being|hashed|encrypted|secure|empty|blank|case|managed|rotated|shared|same|different|"
    r"sent|easy|hard|secret|private)(?:[\s.,;!?]|$)"
)
_CN_SECRET_WORD = r"(?:密码|口令|密钥|暗码|PIN码|验证码)"
_CN_VERB = r"(?:是|为|设为|设置为|设成|改为|改成|换成|用|：|:|=)"
# What names a secret whose value may come later, in the same turn or the next one.
_NAMED_SECRET = (
    r"\b(?:password|passwd|passphrase|passcode|pin(?:[ -]?code)?|login|credentials|"
    r"(?:wi-?fi|door|gate|locker|alarm|safe|garage|entry|keypad|lock|building)\s+(?:code|key))s?\b"
    r"(?!\s+(?:manager|field|reset|policy|hint|rules?|requirements?|page|screen)\b)"
)
_CN_NAMED_SECRET = r"(?:密码|口令|密钥|暗码|PIN码|门禁码|验证码)"
# A value that looks made up: four or more characters with a digit or a symbol in them
# ("Brisket4life!", "4821", "admin@staging"), not a year or a time.
_MADE_UP = (
    r"(?=[^\s'\"“”]*[\d!@#$%^&*_+=~])(?!(?:19|20)\d\d\b|\d{1,2}(?::\d\d)?(?:am|pm)\b)"
    r"[^\s'\"“”,;]{3,}[^\s'\"“”,;.?]"
)
# Words that say what a new password is like, not what it is.
_ORDINARY_VALUE = (
    r"(?:longer|stronger|shorter|easier|harder|simpler|better|worse|safer|weaker|similar|"
    r"different|fine|okay|good|great|random|unique|complicated|impossible|ridiculous|awful|"
    r"terrible|annoying|mine|yours|theirs|his|hers)\b"
)
# How such a value is given: a made-up one after "is", "it's", ":" or "/"; after "the new
# one is" or "changed it to", any word that is not an ordinary one ("sunflower").
_GIVEN = (
    rf"(?:(?:\b(?:is|was|are|to|as)|'s|[:=/])\s*['\"“]?{_MADE_UP}"
    r"|\b(?:new one is|new one's|changed it to|set it to|changed to|is now)\s+['\"“]?"
    rf"(?!{_NOT_A_SECRET}|{_ORDINARY_VALUE})[^\s'\"“”,;.!?]{{4,}}"
    r"(?=['\"”]?(?:[.!?,;]|\s*$)))"
)

_IN_CONTEXT = "password in context"
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
        rf"\b{_SECRET_WORD}\b(?:\s+(?:for|of|on)\s+(?:the\s+)?[\w.@-]+)?"
        r"(?:"
        # With a verb: whatever follows, unless it is an ordinary word.
        r"\s*(?:is\s+set\s+to|was\s+set\s+to|set\s+to|changed\s+to|is\s+now|is|was|to|=|:)"
        rf"\s*(?!{_NOT_A_SECRET})['\"]?[^\s'\"]{{4,}}"
        # Without one: a quoted phrase, or a word holding a digit ("password hunter7").
        r"|\s+['\"][^'\"\n]{4,}['\"]"
        r"|\s+(?=[^\s]*\d)[^\s'\"]{4,}"
        r")"
        rf"|{_CN_SECRET_WORD}\s*{_CN_VERB}?\s*[A-Za-z0-9!@#$%^&*()_+\-=.~?]{{4,}}",
        re.IGNORECASE,
    ),
    # The value some words after the name: "…password, the new one is X", "PIN? It's X".
    _IN_CONTEXT: re.compile(
        rf"{_NAMED_SECRET}[\s\S]{{0,100}}?{_GIVEN}(?:[^.!?\n]{{0,40}}?{_GIVEN})*"
        rf"|{_CN_NAMED_SECRET}[\s\S]{{0,40}}?"
        r"(?:新的是|新密码是|现在是|改成了?|换成了?|设成了?|设置成了?|设为|是|为|：|:)\s*"
        r"[A-Za-z0-9!@#$%^&*()_+\-=.~?]{4,}(?![年月日号岁])",
        re.IGNORECASE,
    ),
    # Said without naming it: "the new one for the router is Pierogi!Tuesday88", "the master
    # code they picked is 7305", "新的那串是 maomao@2024xm".
    "unnamed secret": re.compile(
        r"\b(?:the |my |our )?new one(?: for (?:the |my |our )?[\w -]{1,25}?)?(?:\s+is|'s|:)\s*"
        rf"['\"“]?(?!v?\d+(?:\.\d+)+\b){_MADE_UP}(?<!!)"
        r"|\b(?:master|access|security|door|alarm|safe|gate|entry|admin|unlock|lock|garage|"
        r"building|keypad|wi-?fi)\s+(?:code|combination|combo)\b[^.!?\n]{0,30}?"
        r"(?:\bis|\bwas|:|=)\s*['\"“]?\d{4,10}\b"
        r"|(?:新的|新设的|新改的)?(?:那串|这串|那个串|一串)(?:字符|密码)?(?:是|为|：|:)\s*"
        r"(?=[^\s，。,]*[\d!@#$%^&*_+=~])[A-Za-z0-9!@#$%^&*()_+\-=.~?]{4,}"
        r"|新的(?:是|为|：|:)\s*(?=[^\s，。,]*\d)(?=[^\s，。,]*[A-Za-z!@#$%^&*])"
        r"[A-Za-z0-9!@#$%^&*()_+\-=.~?]{6,}",
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


# A number called a card's ("Card number 4929 …", 卡号 …) is one even when its check digit is
# wrong (mistyped, or made up to test us).
_CARD_NAMED = re.compile(
    r"\b(?:card|visa|mastercard|amex)\b[^.!?\n\d]{0,20}$|卡号?[^。！？\d]{0,6}$", re.I
)


def _card_numbers(text: str) -> list[re.Match[str]]:
    found = []
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if not (13 <= len(digits) <= 19 and len(set(digits)) > 1):
            continue
        if luhn_valid(digits) or _CARD_NAMED.search(
            text[max(match.start() - 30, 0) : match.start()]
        ):
            found.append(match)
    return found


def _spans(text: str, context: str = "") -> list[tuple[str, int, int]]:
    """Each sensitive span of ``text``: its kind, start and end. With ``context`` (what was
    said just before), a value ``text`` gives for a secret the context names counts too."""
    spans = [
        (name, match.start(), match.end())
        for name, pattern in _SECRET_PATTERNS.items()
        for match in pattern.finditer(text)
    ]
    spans.extend(("card number", match.start(), match.end()) for match in _card_numbers(text))
    spans.extend(
        ("resident id", match.start(), match.end())
        for match in _RESIDENT_ID.finditer(text)
        if resident_id_valid(match.group(0))
    )
    if context:
        offset = len(context) + 1
        spans.extend(
            (_IN_CONTEXT, max(match.start() - offset, 0), match.end() - offset)
            for match in _SECRET_PATTERNS[_IN_CONTEXT].finditer(f"{context}\n{text}")
            if match.end() > offset
        )
    return spans


def sensitive_kinds(text: str) -> list[str]:
    """The kinds of sensitive data in ``text`` (never the data itself)."""
    return sorted({name for name, _start, _end in _spans(text)})


def contains_sensitive(text: str, context: str = "") -> bool:
    return bool(_spans(text, context))


_LABELS = {
    "private key": "private key",
    "openai key": "API key",
    "github token": "token",
    "aws access key": "AWS key",
    "slack token": "token",
    "google api key": "API key",
    "stripe key": "API key",
    "memoryapp token": "token",
    "jwt": "token",
    "bearer token": "token",
    "url credentials": "credentials",
    "assigned secret": "secret",
    "password": "password",
    "password in context": "password",
    "unnamed secret": "password",
    "ssn": "SSN",
    "card number": "card number",
    "resident id": "ID number",
}


def _merged(text: str, context: str = "") -> list[tuple[int, int, str]]:
    """Sensitive spans, overlapping ones merged, each with the label of its first kind."""
    spans = sorted(
        ((start, end, name) for name, start, end in _spans(text, context)),
        key=lambda span: (span[0], -span[1]),
    )
    merged: list[tuple[int, int, str]] = []
    for start, end, name in spans:
        if merged and start <= merged[-1][1]:
            first = merged[-1]
            merged[-1] = (first[0], max(first[1], end), first[2])
        else:
            merged.append((start, end, name))
    return merged


def redact(text: str, context: str = "") -> tuple[str, int]:
    """``text`` with every sensitive span replaced by e.g. "[redacted password]", and how
    many were replaced (``context``: see _spans)."""
    merged = _merged(text, context)
    for start, end, name in reversed(merged):
        text = f"{text[:start]}{REDACTED} {_LABELS.get(name, 'secret')}]{text[end:]}"
    return text, len(merged)


# What is left of a secret's sentence when it says nothing else ("my AWS key is …").
_FILLER = re.compile(
    r"\b(?:my|our|your|his|her|their|the|a|an|is|was|are|it|its|this|that|here|for|of|to|on|"
    r"in|at|with|and|new|now|current|set|use|using|remember|note|key|keys|secret|secrets|"
    r"token|tokens|api|aws|access|id|number|code|credentials?|login|account|"
    r"password|passwd|passphrase|passcode|pwd|pin|ssn|card)\b"
    r"|我的|我们的|你的|的|是|为|设为|设置为|改为|改成|记住|一下|这个|密码|口令|密钥|号码|号|码",
    re.IGNORECASE,
)


class SensitiveContent(ValueError):
    """Text that is nothing but a secret: refused rather than stored."""

    def __init__(self, kinds: list[str]):
        super().__init__("The text is only a secret (" + ", ".join(kinds) + ").")
        self.kinds = kinds


def only_secret(text: str) -> bool:
    """Whether ``text`` holds a secret and nothing worth remembering besides it."""
    merged = _merged(text)
    if not merged:
        return False
    rest = "".join(
        text[end : merged[index + 1][0] if index + 1 < len(merged) else len(text)]
        for index, (_start, end, _name) in enumerate(merged)
    )
    rest = text[: merged[0][0]] + rest
    return not re.search(r"\w", _FILLER.sub(" ", rest))


def screen(text: str) -> str:
    """``text`` to store: its secrets redacted. Raises SensitiveContent when it is only one."""
    if not _spans(text):
        return text
    if only_secret(text):
        raise SensitiveContent(sensitive_kinds(text))
    return redact(text)[0]


# Where a clause ends: a sentence's end, a comma, colon or semicolon (English or Chinese).
_CLAUSE_END = re.compile(r"(?<=[.!?。！？])\s*|[，,:：;；、]\s*|\n+")
_SENTENCE_END = re.compile(r"[.!?。！？\n]")
# What goes on giving the secret's details after it ("…: 5355 …, exp 11/27, CVC 412").
_SECRET_DETAIL = re.compile(r"^\W*(?:[A-Za-z]+\W*){0,2}\d[\d/ -]*\W*$")


def without_secrets(text: str, context: str = "") -> tuple[str, int]:
    """``text`` without the clauses that give a secret (and the details right after one),
    the other clauses kept as they were; and how many secrets were taken out (``context``:
    see _spans). "I changed my wifi password. The new one is Brisket4life! I moved to
    Denver." keeps "I changed my wifi password. I moved to Denver."."""
    redacted, count = redact(text, context)
    if not count:
        return text, 0
    kept: list[str] = []
    dropping = False
    start = 0
    for end in [*(match.end() for match in _CLAUSE_END.finditer(redacted)), len(redacted)]:
        clause = redacted[start:end]
        start = end
        if not clause:
            continue
        dropping = REDACTED in clause or (dropping and bool(_SECRET_DETAIL.match(clause)))
        if not dropping:
            kept.append(clause)
        elif (
            _SENTENCE_END.search(clause.rstrip(" "))
            and kept
            and not _SENTENCE_END.search(kept[-1].rstrip(" ")[-1:])
        ):
            # The sentence ended with the secret: the clause before it ends it now.
            kept[-1] = kept[-1].rstrip(" ,，:：;；、") + (
                "。" if re.search(r"[。！？]", clause) else ". "
            )
    return "".join(kept).strip(), count
