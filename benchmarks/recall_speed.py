"""Injection preview speed: one user with 100,000 memories among 1,000,000 rows (at --scale 1).

    python benchmarks/recall_speed.py --scale 0.01          # quick check: 10,000 rows
    python benchmarks/recall_speed.py --scale 1             # the full figures (fills once, ~15 min)
    python benchmarks/recall_speed.py --scale 1 --messages 1000000   # and past turns to search
    python benchmarks/recall_speed.py --scale 1 --messages 1000000 --runs 5   # median of 5 runs

It prints a host reference first (``host_reference_ms``): the same code measures several
times slower on a host with slow memory, so compare figures from two hosts by it.

``--messages N`` stores N messages (past turns) in conversations of the bench user, made
the same way, so each preview also searches them (episodic recall).

Runs against its own database (``memoryapp_bench``, or ``memoryapp_bench_messages`` with
``--messages``, on the same server), so the development data is untouched; each fill is kept
and reused while its size matches, and the two runs do not refill each other's.
Rows are made inside PostgreSQL: each memory is 6-10 words drawn (skewed, so
some words are common) from an English and Chinese vocabulary, and its vector
is the sum of its words' local-provider vectors, which is exactly what the
local provider computes for the text before normalising (cosine distance does
not care about the norm). Requests go through the real view with the test
client and a real API token, not dry runs: each also updates use counts and
writes an access log row.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from speed_tricks import SPEED_TRICKS, turn_off  # noqa: E402

from accounts.models import ApiToken, MemorySettings  # noqa: E402
from config.gc_tuning import freeze_startup_objects  # noqa: E402
from conversations.models import MESSAGE_HNSW_INDEX_PREFIX  # noqa: E402
from core import side_connections  # noqa: E402
from memories.models import HNSW_INDEX_PREFIX  # noqa: E402
from memories.search import chat_pool, member_project_ids  # noqa: E402
from recall.injection import PreviewRequest  # noqa: E402
from search import hybrid  # noqa: E402
from search.buckets import VECTOR_BUCKETS, pool_buckets  # noqa: E402
from search.embeddings import get_provider, vector_literal  # noqa: E402
from search.keyword import access_lexemes, keyword_sql  # noqa: E402
from search.textsearch import search_document  # noqa: E402
from search.vectors import (  # noqa: E402
    embedded_with,
    exact_nearest_sql,
    hnsw_ef_search,
    hnsw_nearest_sql,
    set_ef_search,
    vector_plan,
)

FULL_ROWS = 1_000_000
FULL_USER_ROWS = 100_000
OTHER_USERS = 900

ENGLISH = (
    "deploy docker kubernetes postgres backup invoice budget survey bridge tunnel rail station "
    "datum coordinate python rust typescript react vitest pytest jest deadline meeting review "
    "report release branch merge conflict schema index query cache latency memory prompt model "
    "embedding vector token budget editor neovim vscode theme dark light tea coffee lunch gym "
    "travel flight hotel visa passport birthday gift music piano guitar book novel garden dog "
    "cat bicycle marathon doctor dentist insurance tax salary contract client vendor supplier "
    "meeting agenda roadmap milestone sprint ticket bug fix test coverage lint format style "
    "prefer always never usually weekly daily monthly morning evening remote office shanghai "
    "berlin paris tokyo london beijing shenzhen hangzhou frankfurt"
)
CHINESE = (
    "部署 测试 数据库 备份 发票 预算 测量 桥梁 隧道 铁路 车站 坐标 偏好 总是 从不 每周 每天 "
    "会议 报告 发布 分支 合并 冲突 索引 查询 缓存 延迟 记忆 模型 向量 编辑器 主题 喜欢 绿茶 "
    "咖啡 午饭 健身 旅行 航班 酒店 签证 护照 生日 礼物 音乐 钢琴 吉他 小说 花园 自行车 马拉松 "
    "医生 保险 工资 合同 客户 供应商 里程碑 需求 缺陷 修复 覆盖率 格式 风格 上海 北京 深圳 杭州"
)
REBUILT_INDEXES = (
    *(f"{HNSW_INDEX_PREFIX}{bucket}" for bucket in range(VECTOR_BUCKETS)),
    "memory_search_idx",
    "memory_search_access_idx",
)
KINDS = ["preference", "fact", "lesson", "decision", "pattern", "goal", "context"]


def use_bench_database(name: str = "memoryapp_bench") -> None:
    """Create (or reuse) and migrate the database ``name``; point the connection at it."""
    settings.DATABASES["default"]["TEST"].update(NAME=name)
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=True, serialize=False)


def vocabulary(size: int) -> list[str]:
    """English words, Chinese words, and made-up project words to reach ``size``."""
    rng = random.Random(7)
    words = list(dict.fromkeys(f"{ENGLISH} {CHINESE}".split()))
    while len(words) < size:
        words.append(
            "".join(rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou") for _ in range(3))
        )
    return words[:size]


def fill(total: int, user_rows: int) -> tuple[int, int]:
    """The bench user's id and a small user's id, filling the table when its size differs."""
    from django.contrib.auth import get_user_model

    User = get_user_model()
    bench, _ = User.objects.get_or_create(username="bench", defaults={"email": "bench@example.com"})
    small, _ = User.objects.get_or_create(username="small", defaults={"email": "small@example.com"})
    for user in (bench, small):
        MemorySettings.objects.filter(user=user).update(memory_enabled=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memoryapp_memory")
        if cursor.fetchone()[0] == total + 50:
            print(
                f"Reusing the {total + 50:,} rows already in {connection.settings_dict['NAME']}.",
                flush=True,
            )
            return bench.pk, small.pk
    with connection.cursor() as cursor:
        # Before deleting the other users: the ORM would delete their memories one by one.
        cursor.execute("TRUNCATE memoryapp_memory CASCADE")
    others = [User(username=f"other{n}", email=f"other{n}@example.com") for n in range(OTHER_USERS)]
    User.objects.filter(username__startswith="other").delete()
    other_ids = [user.pk for user in User.objects.bulk_create(others)]
    provider = get_provider()
    words = vocabulary(3000)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '3GB'")
        # Built after the fill, much faster than row by row, exactly as the migrations made them.
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memoryapp_memory' "
            "AND indexname = ANY(%s)",
            [list(REBUILT_INDEXES)],
        )
        index_definitions = cursor.fetchall()
        assert len(index_definitions) == len(REBUILT_INDEXES), (
            f"an earlier fill broke off: drop {connection.settings_dict['NAME']}"
        )
        for name, _definition in index_definitions:
            cursor.execute(f"DROP INDEX {name}")
        cursor.execute(
            f"CREATE TEMP TABLE vocab (id int PRIMARY KEY, word text, doc text, "
            f"vec vector({provider.dimensions}))"
        )
        with cursor.copy("COPY vocab (id, word, doc, vec) FROM STDIN") as copy:
            for index, word in enumerate(words):
                raw = provider.unnormalised(word)  # type: ignore[attr-defined]
                copy.write_row((index, word, search_document(word), vector_literal(raw)))
        cursor.execute(
            "CREATE TEMP TABLE owners AS SELECT row_number() OVER () - 1 AS n, id "
            "FROM unnest(%s::bigint[]) AS id",
            [other_ids],
        )
        print("Filling memories in SQL…", flush=True)
        # Owner: the bench user for the first rows, the other users for the rest.
        # Words: id = floor(V * random()^2), so low ids (real words) are common.
        cursor.execute(
            """
            INSERT INTO memoryapp_memory (owner_id, scope, kind, content, tags, importance,
                confidence, origin, pinned, status, valid_from, created_at, updated_at,
                access_count, evidence, metadata, revision, embedding, embedding_model,
                search_document)
            SELECT CASE WHEN g <= %(user_rows)s THEN %(bench)s
                        ELSE (SELECT id FROM owners WHERE n = g %% %(others)s) END,
                   'user', (%(kinds)s::text[])[1 + g %% 7], w.content, '{}', 0.8, 0.8,
                   'manual', g %% 997 = 0, 'active', now() - (g %% 400) * interval '1 day',
                   now() - (g %% 400) * interval '1 day', now(), g %% 13, '[]', '{}', 1,
                   w.embedding, %(model)s, w.doc
            FROM generate_series(1, %(total)s) AS g
            CROSS JOIN LATERAL (
                SELECT string_agg(v.word, ' ' ORDER BY pick.o) AS content,
                       string_agg(v.doc, ' ' ORDER BY pick.o) AS doc,
                       sum(v.vec) AS embedding
                FROM (
                    SELECT o, floor(%(vocab)s * random() ^ 2)::int AS word_id
                    FROM generate_series(1, 6 + g %% 5) AS o
                ) AS pick
                JOIN vocab v ON v.id = pick.word_id
            ) AS w
            """,
            {
                "user_rows": user_rows,
                "bench": bench.pk,
                "others": len(other_ids),
                "kinds": KINDS,
                "model": provider.model_name,
                "total": total,
                "vocab": len(words),
            },
        )
        print(f"  {total:,} rows in {time.perf_counter() - started:.0f} s", flush=True)
    # The small user: 50 memories, made through the real provider.
    with connection.cursor() as cursor:
        for n in range(50):
            text = f"{words[n]} {words[n + 50]} {words[n + 100]} note {n}"
            cursor.execute(
                "INSERT INTO memoryapp_memory (owner_id, scope, kind, content, tags, importance, "
                "confidence, origin, pinned, status, valid_from, created_at, updated_at, "
                "access_count, evidence, metadata, revision, embedding, embedding_model, "
                "search_document) VALUES (%s, 'user', 'fact', %s, '{}', 0.8, 0.8, 'manual', "
                "false, 'active', now(), now(), now(), 0, '[]', '{}', 1, %s, %s, %s)",
                [
                    small.pk,
                    text,
                    vector_literal(provider.embed([text])[0]),
                    provider.model_name,
                    search_document(text),
                ],
            )
    started = time.perf_counter()
    print("Building the full-text and HNSW indexes…", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '3GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 2")
        for _name, definition in index_definitions:
            cursor.execute(definition)
        cursor.execute("VACUUM ANALYZE memoryapp_memory")
    print(f"  indexes in {time.perf_counter() - started:.0f} s", flush=True)
    return bench.pk, small.pk


MESSAGES_PER_CONVERSATION = 200
MESSAGE_INDEXES = (
    "message_search_idx",
    *(f"{MESSAGE_HNSW_INDEX_PREFIX}{bucket}" for bucket in range(VECTOR_BUCKETS)),
)


def fill_messages(bench_id: int, count: int) -> None:
    """``count`` messages in conversations of the bench user (refilled when the count differs):
    4-12 vocabulary words each, a day apart per conversation, with their search document and
    local-provider vector made in SQL as the memories' are."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memoryapp_message")
        if cursor.fetchone()[0] == count:
            print(
                f"Reusing the {count:,} messages already in {connection.settings_dict['NAME']}.",
                flush=True,
            )
            return
        # Not TRUNCATE ... CASCADE of the conversations: it would empty the memories too.
        cursor.execute("TRUNCATE memoryapp_message CASCADE")
        cursor.execute("DELETE FROM memoryapp_conversation WHERE client = 'bench'")
    if not count:
        return
    provider = get_provider()
    words = vocabulary(3000)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '3GB'")
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memoryapp_message' "
            "AND indexname = ANY(%s)",
            [list(MESSAGE_INDEXES)],
        )
        index_definitions = cursor.fetchall()
        for name, _definition in index_definitions:
            cursor.execute(f"DROP INDEX {name}")
        cursor.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS message_vocab (id int PRIMARY KEY, word text, "
            f"doc text, vec vector({provider.dimensions}))"
        )
        cursor.execute("TRUNCATE message_vocab")
        with cursor.copy("COPY message_vocab (id, word, doc, vec) FROM STDIN") as copy:
            for index, word in enumerate(words):
                raw = provider.unnormalised(word)  # type: ignore[attr-defined]
                copy.write_row((index, word, search_document(word), vector_literal(raw)))
        conversations = -(-count // MESSAGES_PER_CONVERSATION)
        cursor.execute(
            "INSERT INTO memoryapp_conversation (owner_id, external_id, title, temporary, client, "
            "participants, extracted_through, created_at, updated_at) "
            "SELECT %s, 'bench-' || c, '', false, 'bench', "
            """'[{"name": "Bench", "role": "user"}, {"name": "Kai", "role": "assistant"}]', """
            "0, now() - c * interval '1 day', now() FROM generate_series(1, %s) AS c",
            [bench_id, conversations],
        )
        print("Filling messages in SQL…", flush=True)
        cursor.execute(
            """
            INSERT INTO memoryapp_message (conversation_id, role, content, external_id, speaker,
                position, sent_at, created_at, search_document, embedding, embedding_model)
            SELECT c.id, CASE WHEN g %% 2 = 0 THEN 'user' ELSE 'assistant' END, w.content,
                   'm' || g, '', 1 + g %% %(per)s, c.created_at + (g %% %(per)s) * interval '1 minute',
                   now(), w.doc, w.embedding, %(model)s
            FROM generate_series(0, %(count)s - 1) AS g
            JOIN memoryapp_conversation c ON c.external_id = 'bench-' || (1 + g / %(per)s)
                AND c.owner_id = %(bench)s
            CROSS JOIN LATERAL (
                SELECT string_agg(v.word, ' ' ORDER BY pick.o) AS content,
                       string_agg(v.doc, ' ' ORDER BY pick.o) AS doc,
                       sum(v.vec) AS embedding
                FROM (
                    SELECT o, floor(%(vocab)s * random() ^ 2)::int AS word_id
                    FROM generate_series(1, 4 + g %% 9) AS o
                ) AS pick
                JOIN message_vocab v ON v.id = pick.word_id
            ) AS w
            """,
            {
                "per": MESSAGES_PER_CONVERSATION,
                "count": count,
                "bench": bench_id,
                "model": provider.model_name,
                "vocab": len(words),
            },
        )
        print(f"  {count:,} messages in {time.perf_counter() - started:.0f} s", flush=True)
        started = time.perf_counter()
        cursor.execute("SET max_parallel_maintenance_workers = 2")
        for _name, definition in index_definitions:
            cursor.execute(definition)
        cursor.execute("VACUUM ANALYZE memoryapp_message")
        print(f"  message indexes in {time.perf_counter() - started:.0f} s", flush=True)


def queries(count: int) -> list[dict[str, object]]:
    """Preview requests: a message and 3 recent messages of 4-8 vocabulary words each."""
    rng = random.Random(11)
    words = vocabulary(3000)

    def sentence() -> str:
        return " ".join(
            words[int(len(words) * rng.random() ** 2)] for _ in range(rng.randint(4, 8))
        )

    return [
        {
            "message": sentence(),
            "recent_messages": [sentence() for _ in range(3)],
            "client": "bench",
        }
        for _ in range(count)
    ]


def host_reference_ms(user_id: int, runs: int = 7) -> float:
    """The median time of one fixed statement over the bench data (each of the bench user's
    memories read from shared buffers, one row at a time as a search reads its matches):
    hosts differ in memory speed by several times, and so do these figures; compare runs on
    two hosts by this first."""
    times = []
    with connection.cursor() as cursor:
        for _run in range(runs):
            started = time.perf_counter()
            cursor.execute(
                "SELECT count(*), sum(length(search_vector)) FROM memoryapp_memory "
                "WHERE owner_id = %s",
                [user_id],
            )
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def run_requests(
    secret: str,
    bodies: list[dict[str, object]],
    stages: dict[str, list[float]] | None = None,
    *,
    keep_connection: bool = False,
) -> tuple[list[float], list[float]]:
    """Server and client times (ms) of a preview for each body; ``stages`` collects the
    server's timing of each stage. The connection is closed after, unless kept."""
    client = Client(headers={"Authorization": f"Bearer {secret}"})
    server, wall = [], []
    for body in bodies:
        started = time.perf_counter()
        response = client.post("/api/v1/injection-preview", body, content_type="application/json")
        wall.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.content[:300]
        timing = json.loads(response.content)["timing_ms"]
        server.append(timing["total_ms"])
        for stage, ms in timing.items():
            if stages is not None and stage != "total_ms":
                stages.setdefault(stage, []).append(ms)
    if not keep_connection:
        connection.close()
    return server, wall


# The concurrent clients start timing together, each once warmed up.
_clients_ready: Any = None


def warmed_client(
    secret: str, warmup: list[dict[str, object]], bodies: list[dict[str, object]]
) -> tuple[list[float], float, float]:
    """One concurrent client: warmed up first, as the 1-client figures are (each new
    PostgreSQL connection loads its catalogs on its first statements: unwarmed, 4 clients'
    p95 was several hundred ms), then its server times and when its timed requests began and
    ended (time.time())."""
    run_requests(secret, warmup, keep_connection=True)
    _clients_ready.wait(timeout=600)
    started = time.time()
    server, _wall = run_requests(secret, bodies)
    return server, started, time.time()


def explain(user_id: int, small_id: int, body: dict[str, object]) -> None:
    """EXPLAIN ANALYZE of the preview's keyword and vector searches for ``body``."""
    from django.contrib.auth import get_user_model

    User = get_user_model()
    provider = get_provider()
    request = PreviewRequest(
        message=str(body["message"]),
        recent_messages=list(body["recent_messages"]),  # type: ignore[call-overload]
    )
    text, depth = request.query, request.depth
    vector = provider.embed([text])[0]
    for label, user in (
        ("bench user", User.objects.get(pk=user_id)),
        ("small user", User.objects.get(pk=small_id)),
    ):
        project_ids = member_project_ids(user)
        pool = chat_pool(user, project=None, conversation=None, project_ids=project_ids)
        print(f"\n--- keyword search, {label} ---")
        keyword = keyword_sql(pool, text, depth, access_lexemes(user, project_ids))
        if keyword is not None:
            print(explain_analyze(*keyword))
        embedded = embedded_with(pool, provider.model_name)
        plan, size = vector_plan(embedded)
        print(f"\n--- vector search, {label}: {plan} plan (candidates ≥ {size:,}) ---")
        if plan == "exact":
            print(explain_analyze(*exact_nearest_sql(embedded, vector, depth)))
        else:
            buckets = pool_buckets(user.pk)
            with transaction.atomic():
                ef_search = hnsw_ef_search(depth, size, buckets, "memoryapp_memory")
                set_ef_search(ef_search)
                print(f"hnsw.ef_search = {ef_search}")
                for bucket in buckets:
                    print(explain_analyze(*hnsw_nearest_sql(embedded, vector, depth, bucket)))


def explain_analyze(sql: str, params: Sequence[Any]) -> str:
    """EXPLAIN (ANALYZE, BUFFERS) of a query run once just before: the connection is new
    after the concurrent clients, and a new server process plans its first query slowly."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", type=float, default=0.01, help="1 = 1,000,000 rows")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="measure the 1-client figures this many times (the same requests) and print the "
        "median of the runs' p50 and p95: one run's tail moves by several ms on a shared machine",
    )
    parser.add_argument(
        "--clients", type=int, default=4, help="concurrent clients (0: one client only)"
    )
    parser.add_argument("--warmup", type=int, default=200, help="requests before measuring")
    parser.add_argument(
        "--messages", type=int, default=0, help="past turns stored for the bench user"
    )
    parser.add_argument(
        "--without",
        action="append",
        default=[],
        choices=sorted(SPEED_TRICKS),
        help="measure with this speed trick turned off (A/B); may be repeated",
    )
    args = parser.parse_args()
    turn_off(args.without)
    settings.API_RATE_LIMIT = ""
    # The fill's vectors stand for a model's: the preview searches them, as it does a model's
    # (it leaves the hash embeddings' out of its ranking, search.hybrid.vector_weight).
    hybrid.finds_meaning = lambda provider: True
    settings.ALLOWED_HOSTS = ["*"]
    use_bench_database("memoryapp_bench_messages" if args.messages else "memoryapp_bench")
    total = int(FULL_ROWS * args.scale)
    user_rows = int(FULL_USER_ROWS * args.scale)
    bench_id, small_id = fill(total, user_rows)
    fill_messages(bench_id, args.messages)
    from django.contrib.auth import get_user_model

    _token, secret = ApiToken.issue(user=get_user_model().objects.get(pk=bench_id), name="bench")
    with connection.cursor() as cursor:
        cursor.execute("SHOW shared_buffers")
        print(f"PostgreSQL shared_buffers: {cursor.fetchone()[0]}")
    print(f"Host reference: {host_reference_ms(bench_id):.0f} ms")
    if "gc-freeze" not in args.without:
        freeze_startup_objects()
    bodies = queries(args.requests + args.warmup)
    warmup_bodies = bodies[args.requests :]
    run_requests(secret, warmup_bodies)  # warm the caches and connections
    bodies = bodies[: args.requests]

    run_figures: dict[str, list[tuple[float, float]]] = {"Server": [], "Client": []}
    for run in range(1, args.runs + 1):
        stages: dict[str, list[float]] = {}
        server, wall = run_requests(secret, bodies, stages)
        for label, values in (("Server", server), ("Client", wall)):
            run_figures[label].append((percentile(values, 0.5), percentile(values, 0.95)))
        print(
            f"\nInjection preview, 1 client, {len(server):,} requests, user with {user_rows:,} of "
            f"{total + 50:,} memories and {args.messages:,} messages"
            + (f" (run {run} of {args.runs}):" if args.runs > 1 else ":")
        )
        for label, values in (("server", server), ("client", wall), *sorted(stages.items())):
            print(
                f"  {label} time ms: p50 {percentile(values, 0.5):.1f}"
                f"  p95 {percentile(values, 0.95):.1f}  p99 {percentile(values, 0.99):.1f}"
                f"  mean {statistics.mean(values):.1f}"
            )
    # Server: the preview's own timing_ms; client: the whole request through Django and the
    # API (authentication, validation, JSON), as a caller waits for it, without the network.
    for label, figures in run_figures.items() if args.runs > 1 else ():
        print(
            f"\n{label} time over {args.runs} runs: median p50 "
            f"{statistics.median(p50 for p50, _p95 in figures):.1f} ms, median p95 "
            f"{statistics.median(p95 for _p50, p95 in figures):.1f} ms (p95 of each run: "
            + ", ".join(f"{p95:.1f}" for _p50, p95 in figures)
            + ")",
            end="",
        )
    print()
    if args.clients < 1:
        return

    # Clients in separate processes, as a web server's workers are: threads in this one
    # process would mostly measure their wait for Python's global interpreter lock.
    per_client = max(1, args.requests // args.clients)
    warmup = max(1, args.warmup // args.clients)
    batches = [
        (secret, warmup_bodies[:warmup], bodies[i * per_client : (i + 1) * per_client])
        for i in range(args.clients)
    ]
    # Each process opens its own: a forked child must not share the parent's pooled
    # connections or side connections (they would interleave on one socket).
    side_connections.finish()
    connection.close()
    connection.close_pool()  # type: ignore[attr-defined]  # PostgreSQL's wrapper has it
    global _clients_ready
    context = multiprocessing.get_context("fork")
    _clients_ready = context.Barrier(args.clients)
    with context.Pool(args.clients) as pool:
        results = pool.starmap(warmed_client, batches)
    elapsed = max(ended for *_, ended in results) - min(started for _, started, _ in results)
    merged = [ms for server, _started, _ended in results for ms in server]
    print(
        f"\n{args.clients} concurrent clients: {len(merged) / elapsed:.0f} requests/s "
        f"(server p50 {percentile(merged, 0.5):.1f} ms, p95 {percentile(merged, 0.95):.1f} ms)"
    )
    explain(bench_id, small_id, bodies[0])


if __name__ == "__main__":
    main()
