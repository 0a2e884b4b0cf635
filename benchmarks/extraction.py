"""Extraction and forgetting speed.

1. Messages per second through extraction runs (the rules extractor,
   reconciliation, and embedding the turns for episodic recall), for a user
   who already has 10,000 memories (with embeddings), in several rounds (the
   machine is shared: one round takes a few seconds and a burst of other work
   moves it). The runs are queued beforehand, as the turns trigger queues
   them when messages arrive; what is timed is running them. With
   ``--turns-embedded`` the turns are embedded beforehand too, so the figure
   is the rules extractor and reconciliation alone. Target for that:
   ≥ 1,000/s on one core. The runs use the extractor MEMORY_EXTRACTOR names, as
   production's do: with ``MEMORY_EXTRACTOR=llm`` and ``EXTRACTION_LLM_URL``
   pointing at a local endpoint that answers at once, the figure is a run's
   own cost around the LLM call (same answers, same work: an A/B of two
   versions of the code).
2. The forgetting pass over 1,000,000 memories. Target: < 60 s. Measured
   twice: the first pass over a fill where nearly every memory is due for a
   change (the worst case: a pass after a long pause or a bulk import), then
   a steady-state day: the markers of earlier fades spread over the last
   30 days, as daily passes leave them, and the pass of the next day.

3. With ``--worker``: end to end through a real django-q2 worker. The dev
   conversations (LoCoMo format, ``--copies`` times, each copy another
   user's) are posted through the API in bulk (batches of up to 500
   messages, then ``/end``), the jobs queued meanwhile are counted (about
   one per conversation: runs coalesce), a real ``qcluster`` process is
   started, and the time until every message is read gives messages per
   second. Target: >= 300/s.

    python benchmarks/extraction.py [--scale 0.1] [--skip-forgetting] [--turns-embedded]
    python benchmarks/extraction.py --worker [--copies 4] [--workers 2] [--data FILE]

Runs in a throw-away database (bench_memoryapp) on the same server.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _setup import BASE_DIR, SHARED_DATA, benchmark_database, percentiles, setup_django

if TYPE_CHECKING:
    from conversations.models import Conversation

TALK = [
    "I prefer {tool} over {other} for {task}.",
    "We use {tool} for {task}.",
    "The project uses {tool} for {task}.",
    "We chose {tool} over {other} because it is simpler.",
    "I plan to learn {tool} this year.",
    "我喜欢用 {tool} 做{task_cn}。",
    "项目使用 {tool} 处理{task_cn}。",
    "Could you look at the failing test in module {n}?",
    "Here is the stack trace from run {n}, it mentions a timeout somewhere.",
    "Let me think about it and come back later with more details on {task}.",
    "这个函数第 {n} 行好像有问题，帮我看看。",
    "What does this error mean for {task}?",
]
ASSISTANT = "Sure, here is what I found about {task}: the configuration in step {n} needs a look."
TOOLS = [
    "Vue",
    "React",
    "pytest",
    "Django",
    "PostgreSQL",
    "Rust",
    "Go",
    "Vim",
    "pnpm",
    "CGCS2000",
    "GDAL",
    "Redis",
]
TASKS = ["dashboards", "tests", "surveys", "maps", "imports", "reports", "deployments", "caching"]
TASKS_CN = ["报表", "测试", "测量数据", "地图", "导入", "部署"]


def _fill_memories(user_id: int, count: int, dimensions: int, model: str) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO memoryapp_memory (owner_id, scope, kind, content, tags, importance, confidence,
                origin, pinned, status, valid_from, created_at, updated_at, access_count, evidence,
                metadata, revision, embedding, embedding_model, search_document)
            SELECT %(user)s, 'user', 'fact', c.content, '{}', 0.8, 0.8, 'manual', false, 'active',
                   now(), now(), now(), 0, '[]', '{}', 1,
                   (SELECT array_agg(random() - 0.5) FROM generate_series(1, %(dims)s) r WHERE g > 0)::vector,
                   %(model)s, lower(c.content)
            FROM generate_series(1, %(count)s) g,
                 LATERAL (SELECT 'Note ' || g || ' about topic ' || (g %% 331) || ' and item '
                                 || md5(g::text) AS content) c
            """,
            {"user": user_id, "count": count, "dims": dimensions, "model": model},
        )
    _settle()


def _settle() -> None:
    """What autovacuum does to a table soon after a bulk load (statistics, GIN pending list)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memoryapp_memory")


def _conversations(user: Any, messages: int, prefix: str) -> list[Conversation]:
    from conversations.models import Conversation, Message

    rng = random.Random(7)
    conversations = []
    rows = []
    for index in range(messages // 10):
        conversation = Conversation.objects.create(owner=user, external_id=f"{prefix}-{index}")
        conversations.append(conversation)
        for position in range(1, 11):
            values = {
                "tool": rng.choice(TOOLS),
                "other": rng.choice(TOOLS),
                "task": rng.choice(TASKS),
                "task_cn": rng.choice(TASKS_CN),
                "n": rng.randint(1, 999),
            }
            text = (rng.choice(TALK) if position % 2 else ASSISTANT).format(**values)
            rows.append(
                Message(
                    conversation=conversation,
                    role="user" if position % 2 else "assistant",
                    content=text,
                    external_id=str(position),
                    position=position,
                )
            )
    Message.objects.bulk_create(rows, batch_size=2000)
    return conversations


def bench_extraction(scale: float, repeat: int, turns_embedded: bool) -> None:
    """``repeat`` rounds of ``messages`` new messages each; the same talk every round, so
    later rounds mostly merge into what the first created. ``turns_embedded``: each round's
    turns are embedded (for episodic recall) before its runs, untimed, so that the figure is
    the rules extractor and reconciliation alone."""
    from django.conf import settings

    from conversations.extraction.runs import execute_run
    from conversations.jobs import embed_messages
    from conversations.models import ExtractionRun, Message
    from memories.models import Memory
    from search.embeddings import get_provider
    from tests.conftest import make_user

    existing = max(100, int(10_000 * scale))
    messages = max(100, int(5_000 * scale))
    user = make_user("bench@example.com")
    provider = get_provider()
    _fill_memories(user.pk, existing, provider.dimensions, provider.model_name)
    print(
        f"extraction ({settings.MEMORY_EXTRACTOR}): {repeat} rounds of {messages} messages in "
        f"runs of 10, {existing} existing memories"
        + (
            ", turns embedded beforehand (extractor and reconciliation alone)"
            if turns_embedded
            else ""
        )
    )
    throughputs = []
    for round_number in range(1, repeat + 1):
        conversations = _conversations(user, messages, prefix=f"bench{round_number}")
        if turns_embedded:
            embed_messages(
                list(
                    Message.objects.filter(conversation__in=conversations).values_list(
                        "id", flat=True
                    )
                )
            )
        # Queued as the conversations' turns triggers queue them at ingestion, untimed.
        queued = ExtractionRun.objects.bulk_create(
            ExtractionRun(
                conversation=conversation, trigger="turns", extractor=settings.MEMORY_EXTRACTOR
            )
            for conversation in conversations
        )
        durations = []
        started = time.perf_counter()
        for run in queued:
            before = time.perf_counter()
            finished = execute_run(run.pk)
            durations.append((time.perf_counter() - before) * 1000)
            assert finished.status == "succeeded", finished.error
        throughputs.append(messages / (time.perf_counter() - started))
        runs = ExtractionRun.objects.filter(conversation__in=conversations)
        totals = runs.values_list("candidates", "created", "merged", "superseded")
        sums = [sum(column) for column in zip(*totals, strict=True)]
        print(
            f"  round {round_number}: {throughputs[-1]:,.0f} messages/s; per run "
            f"{percentiles(durations)}; candidates {sums[0]}, created {sums[1]}, "
            f"merged {sums[2]}, superseded {sums[3]}"
        )
    print(f"  memories now {Memory.objects.count()}")
    print(
        f"  throughput: median {statistics.median(throughputs):,.0f} messages/s over "
        f"{repeat} rounds (target >= 1,000/s)"
    )


DEV_DATA = SHARED_DATA / "conversations_dev.json"
BATCH = 500  # The API's largest batch of messages.


def _database_url() -> str:
    from urllib.parse import quote

    from django.db import connection

    connection.ensure_connection()
    db = connection.settings_dict
    host = quote(str(db["HOST"]), safe="")
    return f"postgresql://{db['USER']}@{host}:{db['PORT']}/{db['NAME']}"


def _post_backlog(path: Path, copies: int, prefix: str) -> tuple[int, list[int]]:
    """Every conversation of the file, ``copies`` times over, through the API; the number of
    messages and the conversations' ids."""
    from conversation_memory import Api, Capabilities, conversation_payload, load_samples
    from conversation_memory import message_payload as turn_payload

    from accounts.models import MemorySettings
    from tests.conftest import make_user

    samples = load_samples(path)
    capabilities = Capabilities(participants=True, message_name_field="speaker")
    messages, conversations = 0, []
    for copy in range(copies):
        user = make_user(f"{prefix}-{copy}@example.com")
        MemorySettings.objects.filter(user=user).update(
            memory_enabled=True, review_extracted=False, auto_extract=True
        )
        api = Api(user)
        for sample in samples:
            conversation = api.post(
                "/conversations", conversation_payload(sample, capabilities), expect=(201,)
            )["id"]
            conversations.append(conversation)
            turns = [turn_payload(sample, turn, capabilities) for turn in sample.turns]
            for start in range(0, len(turns), BATCH):
                api.post(
                    f"/conversations/{conversation}/messages",
                    {"messages": turns[start : start + BATCH]},
                )
            api.post(f"/conversations/{conversation}/end", {}, expect=(202,))
            messages += len(turns)
    return messages, conversations


def _start_worker(workers: int, log: Any) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": _database_url(),
        "Q_SYNC": "false",
        "Q_WORKERS": str(workers),
        "LOG_LEVEL": "WARNING",
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"], cwd=BASE_DIR, env=env, stdout=log, stderr=log
    )


def _all_read(conversations: list[int]) -> bool:
    from django.db.models import F, Max

    from conversations.models import Conversation, ExtractionRun, RunStatus

    if ExtractionRun.objects.filter(
        conversation_id__in=conversations, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]
    ).exists():
        return False
    behind = (
        Conversation.objects.filter(pk__in=conversations)
        .annotate(last=Max("messages__position"))
        .filter(extracted_through__lt=F("last"))
    )
    return not behind.exists()


def bench_worker(path: Path, copies: int, workers: int, rounds: int) -> None:
    """``rounds`` times: post a backlog, start a real worker, time it until every message is
    read; the median."""
    throughputs = [
        _worker_round(path, copies, workers, f"round{number}") for number in range(1, rounds + 1)
    ]
    print(
        f"  end to end: median {statistics.median(throughputs):,.0f} messages/s over {rounds} "
        f"rounds ({', '.join(f'{t:,.0f}' for t in throughputs)}; target >= 300/s)"
    )


def _worker_round(
    path: Path, copies: int, workers: int, prefix: str, timeout: float = 600
) -> float:
    """One backlog through one new worker; its messages per second."""
    from django.conf import settings
    from django.db.models import Count, Max, Min, Sum
    from django.test import override_settings
    from django_q.conf import Conf
    from django_q.models import OrmQ

    from conversations.models import ExtractionRun
    from memories.models import Memory

    Conf.SYNC = False  # Jobs go to the database broker, for the worker.
    logging.getLogger("django-q").setLevel(logging.WARNING)
    with override_settings(API_RATE_LIMIT=""):
        started = time.perf_counter()
        messages, conversations = _post_backlog(path, copies, prefix)
        posted = time.perf_counter() - started
    queued = OrmQ.objects.count()  # The previous round's worker emptied the queue.
    print(
        f"worker {prefix}: {messages} messages in {len(conversations)} conversations posted in "
        f"{posted:.1f} s ({messages / posted:,.0f}/s); {queued} jobs queued; window "
        f"{settings.EXTRACTION_WINDOW_MESSAGES} messages / {settings.EXTRACTION_WINDOW_TOKENS} "
        f"tokens; {workers} worker processes"
    )
    log_path = BASE_DIR / "var" / "bench_worker.log"
    log_path.parent.mkdir(exist_ok=True)
    with log_path.open("wb") as log:
        launched = time.perf_counter()
        worker = _start_worker(workers, log)
        try:
            while not _all_read(conversations):
                if worker.poll() is not None or time.perf_counter() - launched > timeout:
                    raise SystemExit(f"worker stopped or timed out; see {log_path}")
                time.sleep(0.05)
            drained = time.perf_counter() - launched
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    runs = ExtractionRun.objects.filter(conversation_id__in=conversations)
    span = runs.aggregate(first=Min("started_at"), last=Max("finished_at"), runs=Count("id"))
    tally = runs.aggregate(created=Sum("created"), merged=Sum("merged"))
    working = (span["last"] - span["first"]).total_seconds()
    print(
        f"  {span['runs']} runs; created {tally['created']}, merged {tally['merged']}; "
        f"memories {Memory.objects.filter(owner__email__startswith=prefix).count()}\n"
        f"  end to end (posted backlog, worker start -> every message read): {drained:.2f} s, "
        f"{messages / drained:,.0f} messages/s (target >= 300/s)\n"
        f"  in the worker (first run started -> last finished): {working:.2f} s, "
        f"{messages / working:,.0f} messages/s"
    )
    return messages / drained


def bench_forgetting(scale: float) -> None:
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    from memories.forgetting import forget
    from tests.conftest import make_user

    count = max(1000, int(1_000_000 * scale))
    owners = [make_user(f"owner{i}@example.com").pk for i in range(100)]
    fill_started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO memoryapp_memory (owner_id, scope, kind, content, tags, importance, confidence,
                origin, pinned, status, valid_from, created_at, updated_at, access_count,
                last_accessed_at, evidence, metadata, revision, embedding_model, search_document)
            SELECT (%(owners)s::bigint[])[1 + g %% 100], 'user', k.kind, 'Memory number ' || g, '{}',
                   k.importance, 0.8, 'manual', g %% 50 = 0, 'active', now(),
                   now() - make_interval(days => g %% 400), now(), g %% 7,
                   CASE WHEN g %% 3 = 0 THEN now() - make_interval(days => g %% 90) END,
                   '[]', '{}', 1, '', 'memory number ' || g
            FROM generate_series(1, %(count)s) g
            CROSS JOIN LATERAL (SELECT (ARRAY['preference','fact','lesson','decision','pattern','goal','context'])[1 + g %% 7] AS kind,
                                       (ARRAY[0.9, 0.8, 0.85, 0.85, 0.75, 0.7, 0.4])[1 + g %% 7] AS importance) k
            """,
            {"owners": owners, "count": count},
        )
    _settle()
    print(f"forgetting: filled {count:,} memories in {time.perf_counter() - fill_started:.1f} s")
    now = timezone.now()
    _timed_pass(forget, now, "first pass (nearly every memory due)")
    started = time.perf_counter()
    forget(now)
    print(f"  second pass the same day: {(time.perf_counter() - started) * 1000:.0f} ms (no-op)")
    with connection.cursor() as cursor:
        # As if daily passes had been running: each memory's last fade on one of the last 30 days.
        cursor.execute(
            """
            UPDATE memoryapp_memory SET
                faded_at = CASE WHEN faded_at IS NOT NULL
                    THEN %(now)s - make_interval(days => (id %% 30)::int) END,
                confidence_lowered_at = CASE WHEN confidence_lowered_at IS NOT NULL
                    THEN %(now)s - make_interval(days => (id %% 30)::int) END
            WHERE faded_at IS NOT NULL OR confidence_lowered_at IS NOT NULL
            """,
            {"now": now},
        )
    _settle()
    _timed_pass(forget, now + timedelta(days=1), "steady-state day (markers spread over 30 days)")


def _timed_pass(forget: Any, now: Any, label: str) -> None:
    started = time.perf_counter()
    report = forget(now)
    elapsed = time.perf_counter() - started
    total = report.counts["total"]
    print(
        f"  {label}: {elapsed:.1f} s (target < 60 s): forgotten {total['forgotten']:,}, "
        f"importance lowered {total['importance_lowered']:,}, "
        f"confidence lowered {total['confidence_lowered']:,}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the full sizes")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of extraction")
    parser.add_argument("--skip-forgetting", action="store_true")
    parser.add_argument("--skip-extraction", action="store_true")
    parser.add_argument(
        "--turns-embedded",
        action="store_true",
        help="embed each round's turns before its runs: rules and reconciliation alone",
    )
    parser.add_argument("--worker", action="store_true", help="only the real-worker measure")
    parser.add_argument("--copies", type=int, default=4, help="--worker: copies of the file")
    parser.add_argument("--workers", type=int, default=2, help="--worker: worker processes")
    parser.add_argument("--rounds", type=int, default=3, help="--worker: backlogs measured")
    parser.add_argument("--data", type=Path, default=DEV_DATA, help="--worker: LoCoMo file")
    args = parser.parse_args()
    setup_django()
    if args.worker:
        with benchmark_database("bench_extraction_worker"):
            bench_worker(args.data, args.copies, args.workers, args.rounds)
        return
    with benchmark_database():
        if not args.skip_extraction:
            bench_extraction(args.scale, args.repeat, args.turns_embedded)
        if not args.skip_forgetting:
            bench_forgetting(args.scale)


if __name__ == "__main__":
    main()
