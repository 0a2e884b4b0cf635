"""Server time of /settings/memories for a user with 10,000 memories among 1,000,000 rows.

    python benchmarks/settings_page.py [--scale 0.01] [--repeat 30] [--keep]

Builds its own database (``memoryapp_bench``) on the configured PostgreSQL
(the embedded one by default), fills it with bulk SQL, then times the real view
through Django's test Client: the first page, a search as typed (English,
Chinese and misspelt, the HTMX fragment) and a filtered page. Prints median and p95 in
milliseconds and EXPLAIN ANALYZE of the main list query. ``--scale`` shrinks
both counts; ``--keep`` keeps the filled database for the next run.
Target: every median under 100 ms at full scale.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.http import QueryDict  # noqa: E402
from django.template import engines  # noqa: E402
from django.template.backends.django import DjangoTemplates  # noqa: E402
from django.test import Client, RequestFactory  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from accounts.models import MemorySettings  # noqa: E402
from memories.filters import MemoryFilters  # noqa: E402
from memories.jobs import embed_memories  # noqa: E402
from memories.memory_list import MemoryListPage  # noqa: E402
from memories.models import Kind, Memory  # noqa: E402
from memories.views.memories import LIST_SOURCES  # noqa: E402
from search.textsearch import search_document  # noqa: E402
from teams.models import Membership, Project, Role, Team  # noqa: E402

BENCH_DATABASE = "memoryapp_bench"
BENCH_EMAIL = "bench@example.com"
LIST = "/settings/memories"

# Lower-case ASCII words: for these rows the search document is the content itself.
OTHER_WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
    "prefer",
    "tea",
    "coffee",
    "deploy",
    "friday",
    "python",
    "rust",
    "survey",
    "train",
    "window",
    "seat",
    "project",
    "deadline",
    "review",
    "release",
    "metric",
    "unit",
    "test",
    "database",
    "index",
    "cache",
    "queue",
    "worker",
    "budget",
]
USER_TEMPLATES = (
    "I prefer {a} over {b} for {c}",
    "The {c} project uses {a} and {b}",
    "Deploys on {c} need a {a} check first",
    "Learned that {a} fails without {b}",
    "Decided to use {a} instead of {b} in {c}",
    "我喜欢用{zh}写{zh2}",
    "项目使用{zh}作为{zh2}的标准",
    "下次{zh}之前要先检查{zh2}",
)
USER_WORDS = ["postgres", "sqlite", "vue", "react", "docker", "kubernetes", "pytest", "htmx"]
ZH_WORDS = ["前端", "后端", "数据库", "坐标系", "测试", "部署", "缓存", "日志"]


def fill(scale: float) -> Any:
    """The benchmark user, after inserting every row; reused when the data is already there."""
    user_count = max(int(10_000 * scale), 100)
    other_count = int(1_000_000 * scale)
    user = get_user_model().objects.filter(email=BENCH_EMAIL).first()
    embedded = Memory.objects.filter(owner=user, embedding__isnull=False)
    if user is not None and embedded.count() == user_count:
        print(f"Reusing {BENCH_DATABASE}: {Memory.objects.count():,} memories.")
        return user
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE auth_user, accounts_team RESTART IDENTITY CASCADE")
    user = get_user_model().objects.create_user(username="bench", email=BENCH_EMAIL)
    MemorySettings.objects.filter(user=user).update(memory_enabled=True)
    team = Team.objects.create(name="Bench team")
    Membership.objects.create(team=team, user=user, role=Role.MEMBER)
    project = Project.objects.create(team=team, name="Bench project")
    others = max(other_count // 1000, 1)
    words = "ARRAY[" + ",".join(f"'{w}'" for w in OTHER_WORDS) + "]"
    n = len(OTHER_WORDS)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO auth_user (password, is_superuser, username, first_name, last_name,
                                   email, is_staff, is_active, date_joined)
            SELECT '!', false, 'other' || g, '', '', 'other' || g || '@example.com',
                   false, true, now()
            FROM generate_series(1, %s) AS g
            """,
            [others],
        )
        cursor.execute("SELECT min(id) FROM auth_user WHERE username LIKE 'other%%'")
        first_other = cursor.fetchone()[0]
        # Every 1000th row belongs to the benchmark user's project, as teammates' memories.
        cursor.execute(
            f"""
            WITH rows AS (
                SELECT g,
                       w[1 + (g * 7) %% {n}] || ' ' || w[1 + (g * 13 + 3) %% {n}] || ' '
                       || w[1 + (g * 17 + 5) %% {n}] || ' ' || w[1 + (g * 31 + 11) %% {n}] || ' '
                       || w[1 + (g * 37 + 19) %% {n}] || ' ' || w[1 + (g * 41 + 23) %% {n}]
                       AS content
                FROM generate_series(1, %s) AS g, (SELECT {words} AS w) AS vocabulary
            )
            INSERT INTO memoryapp_memory (
                owner_id, scope, project_id, kind, content, tags, importance, confidence,
                origin, pinned, status, deleted_at, forgotten_at, valid_from, created_at,
                updated_at, last_accessed_at, access_count, evidence, metadata, revision,
                embedding_model, search_document)
            SELECT %s + (g %% %s),
                   CASE WHEN g %% 1000 = 0 THEN 'project' ELSE 'user' END,
                   CASE WHEN g %% 1000 = 0 THEN %s END,
                   (ARRAY['preference','fact','lesson','decision','pattern','goal','context'])[1 + g %% 7],
                   content, '{{}}', 0.5 + (g %% 50) / 100.0, 0.8, 'extracted', false,
                   CASE WHEN g %% 20 = 0 THEN 'pending' ELSE 'active' END,
                   CASE WHEN g %% 23 = 0 THEN now() END,
                   CASE WHEN g %% 29 = 0 THEN now() END,
                   now() - (g %% 400) * interval '1 day',
                   now() - (g %% 400) * interval '1 day', now(),
                   CASE WHEN g %% 3 = 0 THEN now() - (g %% 90) * interval '1 day' END,
                   g %% 40, '[]', '{{}}', 1, '', content
            FROM rows
            """,
            [other_count, first_other, others, project.pk],
        )
    rng = random.Random(42)
    now = timezone.now()
    batch: list[Memory] = []
    for _index in range(user_count):
        content = rng.choice(USER_TEMPLATES).format(
            a=rng.choice(USER_WORDS),
            b=rng.choice(USER_WORDS),
            c=rng.choice(OTHER_WORDS),
            zh=rng.choice(ZH_WORDS),
            zh2=rng.choice(ZH_WORDS),
        )
        tags = rng.sample(["work", "travel", "code", "team", "home"], k=rng.randint(0, 2))
        created = now - timedelta(minutes=rng.randint(0, 60 * 24 * 400))
        state = rng.random()
        batch.append(
            Memory(
                owner=user,
                kind=rng.choice(Kind.values),
                content=content,
                tags=tags,
                search_document=search_document(" ".join([content, *tags])),
                importance=round(rng.uniform(0.3, 1.0), 2),
                access_count=rng.randint(0, 50),
                last_accessed_at=created + timedelta(days=rng.randint(0, 30)),
                status="pending" if state < 0.05 else "active",
                forgotten_at=now if 0.05 <= state < 0.1 else None,
                deleted_at=now if 0.1 <= state < 0.15 else None,
                created_at=created,
                valid_from=created,
                evidence=[],
            )
        )
        if len(batch) == 2000:
            Memory.objects.bulk_create(batch)
            batch = []
    Memory.objects.bulk_create(batch)
    # The benchmark user's memories get their vectors from the real embedding job, so the
    # search box's semantic recall has something to search (other users' rows never enter it).
    ids = list(Memory.objects.filter(owner=user).values_list("pk", flat=True))
    for start in range(0, len(ids), 1000):
        embed_memories(ids[start : start + 1000])
    with connection.cursor() as cursor:
        # What autovacuum would have done by now on a live server.
        cursor.execute("VACUUM ANALYZE")
    print(
        f"Filled {BENCH_DATABASE}: {Memory.objects.count():,} memories "
        f"({user_count:,} for the benchmark user) in {time.perf_counter() - started:.0f} s."
    )
    return user


def measure(client: Client, url: str, repeat: int, headers: dict[str, str] | None = None) -> str:
    for _warm_up in range(3):
        assert client.get(url, headers=headers or {}).status_code == 200
    timings = []
    for _run in range(repeat):
        started = time.perf_counter()
        response = client.get(url, headers=headers or {})
        timings.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
    timings.sort()
    p95 = timings[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))]
    return f"median {statistics.median(timings):6.1f} ms   p95 {p95:6.1f} ms"


def explain(user: Any, query: str) -> str:
    """EXPLAIN ANALYZE of the query that picks the page's rows, as the view builds it."""
    request = RequestFactory().get(LIST)
    request.user = user
    source = LIST_SOURCES["memory-list"](request)
    filters = MemoryFilters.from_query(QueryDict(query), source.projects)
    ordered = MemoryListPage(source=source, filters=filters).ordered
    return ordered.values_list("pk", flat=True)[:20].explain(analyze=True, buffers=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1.0 = 10k of 1M memories")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--keep", action="store_true", help="keep the database for the next run")
    args = parser.parse_args()

    settings.DATABASES["default"]["TEST"]["NAME"] = BENCH_DATABASE
    original_name = settings.DATABASES["default"]["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=True)
    try:
        user = fill(args.scale)
        client = Client()
        client.force_login(user)
        htmx = {"HX-Request": "true", "HX-Target": "memory-results"}
        cases = [
            ("first page", LIST, None),
            ("search 'postg' (as typed)", f"{LIST}?q=postg", htmx),
            ("search '数据库' (as typed)", f"{LIST}?q=数据库", htmx),
            ("search 'kubernets' (misspelt)", f"{LIST}?q=kubernets", htmx),
            ("search 'postg' (full page)", f"{LIST}?q=postg", None),
            (
                "filtered page",
                f"{LIST}?kind=preference&kind=lesson&scope=personal&sort=importance",
                None,
            ),
            ("trash tab", f"{LIST}?state=trash&sort=most_used", None),
        ]
        backend = engines["django"]
        assert isinstance(backend, DjangoTemplates)
        engine = backend.engine
        cached = "cached.Loader" in str(engine.loaders)
        print(f"DEBUG {settings.DEBUG}, template debug {engine.debug}, cached loader {cached}.")
        with CaptureQueriesContext(connection) as queries:
            client.get(LIST)
        print(f"\nFirst page: {len(queries)} SQL queries. Timings over {args.repeat} requests:")
        for label, url, headers in cases:
            print(f"  {label:<30} {measure(client, url, args.repeat, headers)}")
        print("\nEXPLAIN ANALYZE of the first page's list query:")
        print(explain(user, ""))
        print("\nEXPLAIN ANALYZE of the search's list query:")
        print(explain(user, "q=postg"))
    finally:
        if not args.keep:
            connection.creation.destroy_test_db(original_name, verbosity=0)


if __name__ == "__main__":
    main()
