"""Conversation memory on a LoCoMo-format file: what extraction keeps, and what recall finds.

    python benchmarks/conversation_memory.py /work/shared/data/conversations_dev.json \\
        [--limit-conversations N] [--questions-per-conversation N] [--raw-turns-as-memories]

For each conversation of the file (a list of {sample_id, conversation, qa}; see
/work/shared/data/README.md), in a throw-away database with the default
offline settings (rules extractor, local embeddings, jobs run inline):

1. One user (memory on, review off) and an API token; every session's turns go
   through the conversations API one message per request, as a chat client
   sends them, with the conversation's participants: speaker_a is the
   account's user; speaker_b the assistant when named "Assistant"/"助手",
   otherwise a second human (role ``user``, each of their messages naming
   them as ``speaker``); ``sent_at`` from the session's date; the turn's
   dia_id as ``external_id``), and the
   conversation is ended after its last session. Extraction runs in the real
   jobs, triggered by the API.
2. Extraction figures: messages sent, memories kept (active + pending),
   **coverage** (the share of the turns the questions cite as evidence that
   some memory names as its evidence), **messages never read** by any
   extraction run (a position in no run's window; must be 0) and **secrets
   stored** (memories the sensitive-data detector flags; must be 0).
3. Recall: each question is sent to the injection preview (dry run, JSON,
   top 10, a budget that fits 10) as that user. Evidence-turn recall@5 and
   @10 (the share of a question's evidence turns among the source turns of
   the first k items, ranked by score) and recall_all@10 (the share of
   questions whose evidence turns are all in the first 10), per category and
   in total.
4. A BM25 baseline (k1=1.2, b=0.75) over the raw turns of the same
   conversation, tokenised as the app's full-text search does.
5. With ``--raw-turns-as-memories``, an oracle: every raw turn stored as a
   memory of a second user, so ranking is measured without extraction.
6. 10 sample questions (fixed seed) with the injected block of the default mode.

Recall is measured in three modes (the preview's ``sources``): memories only,
episodes only (past turns) and both (the default), beside the BM25 line.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _setup import benchmark_database, setup_django

if TYPE_CHECKING:
    from django.test import Client

API = "/api/v1"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TOP_K = 10
SAMPLES = 10
SAMPLE_SEED = 20250301
# Each turn's sent_at: the session's date plus this much per turn, so turns keep their order.
TURN_SPACING = timedelta(seconds=30)
BM25_K1 = 1.2
BM25_B = 0.75
# speaker_b names of the files' assistants; any other speaker_b is a second human.
ASSISTANT_NAMES = frozenset({"Assistant", "助手"})
RUN_TALLY = ("candidates", "created", "merged", "superseded", "skipped", "dropped_sensitive")


@dataclass(frozen=True)
class Mode:
    """A recall mode: what the preview is asked for, on top of the common options."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)


# The recall modes measured: the preview's ``sources``. Items are read from the response's
# "memories" and "episodes" keys, ranked together by score.
MEMORIES_ONLY = Mode("memories only", {"sources": ["memories"]})
DEFAULT_MODE = Mode("both (default)")
MODES: list[Mode] = [MEMORIES_ONLY, Mode("episodes only", {"sources": ["episodes"]}), DEFAULT_MODE]

PREVIEW_OPTIONS: dict[str, Any] = {
    "dry_run": True,
    "format": "json",
    "limit": TOP_K,
    # Large enough that the limit, not a budget, decides what is in: 10 items of any length.
    "budget": 50_000,
    "budgets": {"user": 50_000, "project": 50_000, "conversation": 50_000},
}


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


# Recall --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One recalled thing: a memory, or (later) an episode of raw past turns."""

    kind: str
    id: int
    score: float
    sources: frozenset[int]  # Message ids it stands for.


def preview_items(response: dict[str, Any], sources: dict[int, list[int]]) -> list[Item]:
    """The preview's items, best first (the block orders memories by kind, not score)."""
    items = [
        Item("memory", m["id"], float(m.get("score", 0.0)), frozenset(sources.get(m["id"], ())))
        for m in response.get("memories", [])
    ]
    for episode in response.get("episodes") or []:
        ids = episode.get("message_ids") or episode.get("messages") or []
        if "message_id" in episode:
            ids = [episode["message_id"], *ids]
        items.append(
            Item(
                "episode",
                int(episode.get("id", ids[0] if ids else 0)),
                float(episode.get("score", 0.0)),
                frozenset(int(i) for i in ids),
            )
        )
    return sorted(items, key=lambda item: -item.score)


@dataclass
class Scores:
    """Recall figures of one system, per category."""

    r5: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    r10: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    all10: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))

    def add(self, category: int, expected: set[int], ranked: Sequence[frozenset[int]]) -> bool:
        """Score one question from the ranked items' source message ids; True when all found."""
        if not expected:
            return False
        top5 = set().union(*ranked[:5]) if ranked[:5] else set()
        top10 = set().union(*ranked[:TOP_K]) if ranked[:TOP_K] else set()
        self.r5[category].append(len(expected & top5) / len(expected))
        self.r10[category].append(len(expected & top10) / len(expected))
        found_all = expected <= top10
        self.all10[category].append(1.0 if found_all else 0.0)
        return found_all

    def row(self, categories: Iterable[int] | None) -> tuple[int, float, float, float]:
        keys = list(categories) if categories is not None else list(self.r5)
        r5 = [v for c in keys for v in self.r5.get(c, [])]
        r10 = [v for c in keys for v in self.r10.get(c, [])]
        all10 = [v for c in keys for v in self.all10.get(c, [])]

        def mean(values: list[float]) -> float:
            return statistics.fmean(values) if values else 0.0

        return len(r5), mean(r5), mean(r10), mean(all10)

    def table(self, label: str) -> list[str]:
        lines = [f"{label:<32}{'n':>5}{'R@5':>8}{'R@10':>8}{'all@10':>8}"]
        for category, name in CATEGORIES.items():
            n, r5, r10, all10 = self.row([category])
            lines.append(f"  {category} {name:<28}{n:>5}{r5:>8.3f}{r10:>8.3f}{all10:>8.3f}")
        n, r5, r10, all10 = self.row(None)
        lines.append(f"  {'total':<30}{n:>5}{r5:>8.3f}{r10:>8.3f}{all10:>8.3f}")
        return lines

    def summary(self) -> str:
        n, r5, r10, all10 = self.row(None)
        return f"R@5 {r5:.3f}  R@10 {r10:.3f}  all@10 {all10:.3f}  (n={n})"


@dataclass
class Shown:
    """What a sample question showed: for the samples printed at the end."""

    question: Question
    block: str
    found_all: bool
    items: int


def recall(
    ingested: Ingested,
    questions: list[Question],
    mode: Mode,
    scores: Scores,
    latencies: list[float],
    api: Api | None = None,
    sources: dict[int, list[int]] | None = None,
) -> list[Shown]:
    api = api or ingested.api
    sources = sources if sources is not None else memory_sources(ingested.user)
    shown = []
    for question in questions:
        started = time.perf_counter()
        response = api.post(
            "/injection-preview", {**PREVIEW_OPTIONS, **mode.options, "message": question.question}
        )
        latencies.append((time.perf_counter() - started) * 1000)
        items = preview_items(response, sources)
        expected = {ingested.message_ids[d] for d in question.evidence if d in ingested.message_ids}
        found_all = scores.add(question.category, expected, [item.sources for item in items])
        shown.append(Shown(question, response.get("block", ""), found_all, len(items)))
    return shown


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


def bm25_recall(ingested: Ingested, questions: list[Question], scores: Scores) -> None:
    terms = tokenizer()
    turns = ingested.sample.turns
    index = BM25([terms(f"{turn.speaker}: {turn.text}") for turn in turns])
    for question in questions:
        ranked = [
            frozenset({ingested.message_ids[turns[i].dia_id]})
            for i in index.ranked(terms(question.question))
        ]
        expected = {ingested.message_ids[d] for d in question.evidence if d in ingested.message_ids}
        scores.add(question.category, expected, ranked)


# Oracle: raw turns as memories ---------------------------------------------------------------


def oracle_user(ingested: Ingested, index: int) -> tuple[Api, dict[int, list[int]]]:
    """A second user whose memories are the conversation's raw turns, one each."""
    from accounts.models import MemorySettings
    from memories import services
    from tests.conftest import make_user

    user = make_user(f"oracle{index}@example.com")
    MemorySettings.objects.filter(user=user).update(memory_enabled=True, review_extracted=False)
    memories = [
        services.new_memory(
            owner=user,
            content=f"{turn.speaker}: {turn.text}",
            evidence=[{"messages": [ingested.message_ids[turn.dia_id]]}],
        )
        for turn in ingested.sample.turns
    ]
    services.memories_create(memories=memories, actor=None)
    return Api(user), {m.pk: list(m.evidence[0]["messages"]) for m in memories}


# Main ----------------------------------------------------------------------------------------


def spread(questions: list[Question], count: int | None) -> list[Question]:
    """``count`` questions evenly spaced through the list (files group them by category)."""
    if count is None or count >= len(questions):
        return questions
    return [questions[i * len(questions) // count] for i in range(count)]


def run(args: argparse.Namespace) -> None:
    from django.test import override_settings

    samples = load_samples(args.path)[: args.limit_conversations]
    started = time.perf_counter()
    totals = ExtractionFigures()
    mode_scores = {mode.name: Scores() for mode in MODES}
    bm25_scores = Scores()
    oracle_scores = Scores()
    latencies: list[float] = []
    shown: list[tuple[str, Shown]] = []
    capabilities: Capabilities | None = None
    print(f"{args.path}: {len(samples)} conversations")
    # The benchmark is not a client to throttle: hundreds of requests a minute per token.
    with override_settings(API_RATE_LIMIT=""):
        for index, sample in enumerate(samples, start=1):
            ingested = ingest(sample, index, capabilities)
            if capabilities is None:
                capabilities = ingested.capabilities
                print(
                    f"API: participants {'sent' if capabilities.participants else 'not supported'}, "
                    f"speaker name per message "
                    f"{capabilities.message_name_field or 'not supported'}"
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
            questions = spread(sample.questions, args.questions_per_conversation)
            for mode in MODES:
                for item in recall(ingested, questions, mode, mode_scores[mode.name], latencies):
                    shown.append((mode.name, item))
            bm25_recall(ingested, questions, bm25_scores)
            if args.raw_turns_as_memories:
                api, sources = oracle_user(ingested, index)
                recall(
                    ingested, questions, MEMORIES_ONLY, oracle_scores, [], api=api, sources=sources
                )

    print(totals.line("total"))
    if totals.unread or totals.secrets:
        print(f"{'':<10} WARNING: unread messages and secrets stored must both be 0")
    if totals.secret_kinds:
        print(f"{'':<10} secret kinds stored: {dict(totals.secret_kinds)}")
    print(
        f"ingestion + extraction: {totals.messages} messages in {totals.seconds:.1f} s, "
        f"{totals.messages / totals.seconds:,.1f} messages/s; "
        f"preview median {statistics.median(latencies):.1f} ms, "
        f"p95 {sorted(latencies)[int(0.95 * (len(latencies) - 1))]:.1f} ms"
    )
    print()
    for mode in MODES:
        print("\n".join(mode_scores[mode.name].table(f"recall: {mode.name}")))
    print("\n".join(bm25_scores.table("BM25 over raw turns")))
    if args.raw_turns_as_memories:
        print("\n".join(oracle_scores.table("oracle: raw turns as memories")))
    print()
    for mode in MODES:
        print(f"{mode.name:<32}{mode_scores[mode.name].summary()}")
    print(f"{'BM25 (k1=1.2, b=0.75)':<32}{bm25_scores.summary()}")
    if args.raw_turns_as_memories:
        print(f"{'oracle: raw turns as memories':<32}{oracle_scores.summary()}")

    default_mode = [item for mode, item in shown if mode == DEFAULT_MODE.name]
    picked = random.Random(SAMPLE_SEED).sample(default_mode, min(SAMPLES, len(default_mode)))
    print(f"\n{len(picked)} sample questions ({DEFAULT_MODE.name}, seed {SAMPLE_SEED}):")
    for item in picked:
        q = item.question
        print(
            f"\n[{q.sample_id} cat {q.category} {CATEGORIES.get(q.category, '?')}] {q.question}\n"
            f"  answer: {q.answer}\n  evidence: {', '.join(q.evidence)}; "
            f"all found in top {TOP_K}: {'yes' if item.found_all else 'no'}; {item.items} items"
        )
        print(f"  block: {item.block or '(empty)'}")
    print(f"\ntotal time {time.perf_counter() - started:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", type=Path, help="a LoCoMo-format JSON file")
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N")
    parser.add_argument("--questions-per-conversation", type=int, default=None, metavar="N")
    parser.add_argument(
        "--raw-turns-as-memories",
        action="store_true",
        help="also store every raw turn as a memory of a second user (ranking alone)",
    )
    args = parser.parse_args()
    setup_django()
    quiet()
    with benchmark_database("bench_conversation_memory"):
        try:
            run(args)
        finally:
            # The previews' bookkeeping threads hold connections to the throw-away database.
            from core import side_connections

            side_connections.finish()


def quiet() -> None:
    """No log line per job run inline, nor the missing collected static files' warning."""
    import logging
    import warnings

    logging.getLogger("django-q").setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", message="No directory at")


if __name__ == "__main__":
    main()
