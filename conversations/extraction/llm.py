"""The LLM extractor: any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, DeepSeek…).

The window (with secrets redacted, since it leaves the server) goes out with
a prompt that asks only for what was said explicitly, as JSON. The window
text lists the participants and gives each message's date and speaker; the
prompt asks for memories about anyone but the account's user to name them
(``person``) and for relative times resolved to absolute dates against the
message's date (``event_date``), which become the Candidate's ``speaker``
and ``event_date``. The
answer is read robustly: code fences, text around the JSON, and a truncated
answer (every complete item is kept) are all fine. An answer with no JSON in
it, an HTTP error or a timeout raises ExtractionFailed carrying what came
back, so the run fails visibly, keeps the raw output and is retried.
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

import openai
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from conversations.extraction import Candidate, ExtractionFailed, WindowMessage
from conversations.extraction.topics import find_topic
from core.openai_sdk import Endpoint
from memories.models import KIND_ALIASES, Kind
from memories.sensitive import redact

SYSTEM_PROMPT = """You extract long-term memories from a conversation. The participants are listed
first: one is the account's user (the memories are theirs); others may be an AI assistant or other
people. Each message is shown as [number] date (weekday) speaker: text.

Keep only what a person stated explicitly and what will still be true and useful in later
conversations: preferences, facts about them or their project, events, decisions, lessons learned,
goals. Do not infer, guess or generalise. Skip greetings, small talk, questions, hypotheticals,
and anything the assistant said that the user did not confirm.
Never include passwords, API keys, tokens, card or ID numbers.

One fact per item. A statement about the account's user reads without their name ("Prefers
pytest", "Moved to Lyon on 3 March 2025"); a statement about anyone else names them as the
subject ("Jon went to a pottery class on 7 May 2023") and gives their name as "person".
Resolve relative times ("yesterday", "last Sunday", "next month", "上周六", "去年") to absolute
dates against the date of the message that says them, write the absolute date in the content,
and give the day as "event_date" (YYYY-MM-DD; the first day of the month or year when that is
all that is known).

Answer with JSON only, no prose:
{"memories": [{"kind": "preference|fact|lesson|decision|pattern|goal|context",
  "content": "one short, self-contained statement in the language of the conversation",
  "about": "user|project", "person": "name, only when it is about someone other than the
  account's user", "event_date": "YYYY-MM-DD, only when it says when something happened or will",
  "tags": ["short", "tags"], "confidence": 0.0-1.0,
  "messages": [numbers of the messages it comes from],
  "quote": "the exact words of the message it comes from"}]}
Answer {"memories": []} when nothing should be remembered."""

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)(?:```|$)", re.DOTALL)
_NEGATION = re.compile(
    r"\b(?:not|never|don't|doesn't|avoid|avoids)\b|不要|不喜欢|别|避免", re.IGNORECASE
)
_ITEM_KEYS = ("memories", "candidates", "items", "results")
_ISO_DAY = re.compile(r"^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?")
# What an LLM may put as "person" when it means the account's user.
_USER_WORDS = frozenset({"user", "the user", "me", "i", "用户", "我"})


def _decode_first(text: str) -> Any:
    """The first JSON value in ``text``, ignoring what surrounds it."""
    decoder = json.JSONDecoder()
    for index, char in enumerate(text):
        if char in "[{":
            try:
                return decoder.raw_decode(text, index)[0]
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON value")


def _complete_items(text: str) -> list[Any]:
    """The complete objects of a JSON array cut short (a truncated answer)."""
    decoder = json.JSONDecoder()
    start = text.find("[")
    items: list[Any] = []
    if start < 0:
        return items
    index = start + 1
    while index < len(text):
        while index < len(text) and text[index] in " \t\r\n,":
            index += 1
        try:
            item, index = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            break
        items.append(item)
    return items


def parse_answer(answer: str) -> list[dict[str, Any]]:
    """The candidate items of an LLM answer; raises ValueError when there are none to read."""
    fenced = _FENCE.search(answer)
    texts = [fenced.group(1), answer] if fenced else [answer]
    for text in texts:
        try:
            value = _decode_first(text)
        except ValueError:
            continue
        if isinstance(value, dict):
            for key in _ITEM_KEYS:
                if isinstance(value.get(key), list):
                    return [item for item in value[key] if isinstance(item, dict)]
            if "content" in value:
                return [value]
            continue
        if isinstance(value, list):
            return [item for item in value if isinstance(item, dict)]
    for text in texts:
        items = [item for item in _complete_items(text) if isinstance(item, dict)]
        if items:
            return items
    raise ValueError("the answer holds no JSON list of memories")


def _subject(kind: str, about_project: bool, content: str) -> tuple[str, str]:
    topic = find_topic(content)
    if topic is None or kind not in (Kind.PREFERENCE, Kind.FACT, Kind.DECISION):
        return "", ""
    family = {Kind.PREFERENCE: "preference", Kind.DECISION: "decision"}.get(
        Kind(kind), "project" if about_project else "user"
    )
    value = topic[1]
    if _NEGATION.search(content):
        value = "not " + value
    return f"{family}:{topic[0]}", value


def _event_date(value: Any) -> date | None:
    """``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY`` (the first day of the month or year)."""
    text = str(value or "").strip()
    match = _ISO_DAY.match(text)
    if match is None:
        return None
    year, month, day = match.group(1), match.group(2) or "1", match.group(3) or "1"
    try:
        return date(int(year), int(month), int(day))
    except ValueError:
        return None


def _person(item: dict[str, Any], messages: list[WindowMessage]) -> str:
    """Who the item is about when that is not the account's user; "" when it is."""
    person = str(item.get("person") or item.get("speaker") or "").strip()[:100]
    account_users = {m.speaker.casefold() for m in messages if m.is_account_user and m.speaker}
    if not person or person.casefold() in account_users or person.casefold() in _USER_WORDS:
        return ""
    return person


def candidate_from_item(item: dict[str, Any], messages: list[WindowMessage]) -> Candidate | None:
    content = str(item.get("content") or "").strip()
    if not content:
        return None
    raw_kind = str(item.get("kind") or "fact").strip().lower()
    kind = KIND_ALIASES.get(raw_kind, raw_kind)
    if kind not in Kind.values:
        kind = Kind.FACT
    by_position = {message.position: message for message in messages}
    cited = [
        by_position[number]
        for number in item.get("messages") or []
        if isinstance(number, int) and number in by_position
    ]
    quote = str(item.get("quote") or "").strip()
    if quote and not any(quote in message.content for message in cited or messages):
        quote = ""
    if quote and not cited:
        cited = [message for message in messages if quote in message.content][:1]
    try:
        confidence = min(
            1.0, max(0.0, float(item.get("confidence", settings.MEMORY_DEFAULT_CONFIDENCE)))
        )
    except (TypeError, ValueError):
        confidence = settings.MEMORY_DEFAULT_CONFIDENCE
    tags = [str(tag) for tag in item.get("tags") or [] if isinstance(tag, str | int)]
    person = _person(item, messages)
    about_project = str(item.get("about") or "").lower() == "project" and not person
    subject, value = _subject(kind, about_project, content)
    if person:
        if subject:
            # Someone else's preference is not the user's: it supersedes only theirs.
            subject = f"person:{person.casefold()}:{subject.removeprefix('user:')}"
        if person.casefold() not in content.casefold():
            content = f"{person}: {content}"
    return Candidate(
        kind=kind,
        content=content[:300],
        message_ids=[message.id for message in cited],
        quote=quote or content,
        tags=tags[:10],
        confidence=confidence,
        subject=subject,
        value=value,
        about_project=about_project,
        event_date=_event_date(item.get("event_date")),
        speaker=person,
    )


def participants_text(messages: list[WindowMessage]) -> str:
    """Who speaks in the window: the account's user, other people, the assistant."""
    lines = ["Participants:"]
    seen: set[str] = set()
    for message in messages:
        name = message.speaker or message.role
        if name in seen:
            continue
        seen.add(name)
        if message.is_account_user:
            who = "the account's user: memories are about them unless they name someone else"
        elif message.role == "user":
            who = "another person: name them in memories about them"
        else:
            who = f"the {message.role}"
        lines.append(f"- {name} ({who})")
    return "\n".join(lines)


def message_line(message: WindowMessage) -> str:
    """``[3] 2025-03-04 (Tuesday) Mia: text``, secrets redacted."""
    when = message.sent_at.strftime("%Y-%m-%d (%A) ") if message.sent_at is not None else ""
    name = message.speaker or message.role
    return f"[{message.position}] {when}{name}: {redact(message.content)[0]}"


# An extraction answer is a few kilobytes of JSON. One far longer is refused unread: reading
# (and redacting) a 30 MB answer took a run past its time, and the reclaim job started it again.
MAX_ANSWER_CHARS = 1_000_000


class LlmExtractor:
    name = "llm"

    def __init__(self, *, url: str, model: str, api_key: str = "", timeout: float = 60.0):
        # No retries in the SDK: a failed run is retried by the app's backoff
        # (runs._record_failure), the one retry layer of extraction.
        self.endpoint = Endpoint(base_url=url, api_key=api_key, timeout=timeout, max_retries=0)
        self.model = model

    @classmethod
    def from_settings(cls) -> LlmExtractor:
        if not settings.EXTRACTION_LLM_URL:
            raise ImproperlyConfigured(
                "MEMORY_EXTRACTOR=llm needs EXTRACTION_LLM_URL (an OpenAI-compatible base URL)."
            )
        return cls(
            url=settings.EXTRACTION_LLM_URL,
            model=settings.EXTRACTION_LLM_MODEL,
            api_key=settings.EXTRACTION_LLM_API_KEY,
            timeout=settings.EXTRACTION_LLM_TIMEOUT,
        )

    def _prompt(self, messages: list[WindowMessage], summary: str) -> str:
        lines = [participants_text(messages), "", "Messages:"] if messages else []
        lines.extend(message_line(m) for m in messages)
        if summary:
            lines.append("\nCompaction summary of the session:\n" + redact(summary)[0])
        return "\n".join(lines)

    def _complete(self, prompt: str) -> str:
        try:
            with self.endpoint.call() as client:
                # The raw answer: read leniently below, and kept whole when it is not one.
                answer = client.chat.completions.with_raw_response.create(
                    model=self.model,
                    temperature=0,
                    messages=[
                        {"role": "system", "content": SYSTEM_PROMPT},
                        {"role": "user", "content": prompt},
                    ],
                    extra_headers=self.endpoint.headers,
                )
        except openai.APITimeoutError as exc:
            raise ExtractionFailed(
                f"The LLM endpoint did not answer within {self.endpoint.timeout:g} s."
            ) from exc
        except openai.APIStatusError as exc:
            raise ExtractionFailed(
                f"The LLM endpoint answered HTTP {exc.status_code}.", exc.response.text
            ) from exc
        except openai.APIConnectionError as exc:
            reason = exc.__cause__ or exc
            raise ExtractionFailed(f"The LLM endpoint could not be reached: {reason}.") from exc
        raw = answer.http_response.text
        if len(raw) > MAX_ANSWER_CHARS:
            raise ExtractionFailed(
                f"The LLM endpoint's answer is over {MAX_ANSWER_CHARS:,} characters.", raw
            )
        try:
            return str(json.loads(raw)["choices"][0]["message"]["content"] or "")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ExtractionFailed(
                "The LLM endpoint's answer is not a chat completion.", raw
            ) from exc

    def extract(self, messages: list[WindowMessage], summary: str = "") -> list[Candidate]:
        answer = self._complete(self._prompt(messages, summary))
        try:
            items = parse_answer(answer)
        except ValueError as exc:
            raise ExtractionFailed(f"The LLM's answer could not be read: {exc}.", answer) from exc
        candidates = (candidate_from_item(item, messages) for item in items)
        return [candidate for candidate in candidates if candidate is not None]
