from __future__ import annotations

import os
import signal
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core import side_connections
from memories import services
from memories.filters import MemoryFilters
from memories.models import HNSW_INDEX_PREFIX, Memory, Scope
from memories.search import candidates, search_memories
from search import buckets, keyword, table_statistics, vectors
from search.buckets import VECTOR_BUCKETS, vector_bucket
from search.embeddings import get_provider, vector_literal
from search.hybrid import RRF_K, fuse
from search.vectors import embedded_with, vector_search
from tests.conftest import make_user
from tests.recall_helpers import remember

pytestmark = pytest.mark.django_db


def contents(result):
    return [item.memory.content for item in result.memories]


def test_fusion_rewards_memories_found_both_ways():
    fused = fuse([[1, 2, 3], [3, 4]])
    assert fused[3] == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1))
    assert fused[1] == pytest.approx(1 / (RRF_K + 1))
    assert max(fused, key=lambda memory_id: fused[memory_id]) == 3


def test_hybrid_search_finds_english_and_chinese(alice):
    remember(alice, "I deploy the survey app with Docker Compose")
    remember(alice, "我们用 PostgreSQL 存储测量数据")
    remember(alice, "Lunch is at noon on Fridays")

    assert contents(search_memories(alice, "docker deployment"))[0].startswith("I deploy")
    assert contents(search_memories(alice, "测量数据存在哪里"))[0].startswith("我们用")


def test_vector_search_finds_what_keywords_miss(alice):
    remember(alice, "The cluster uses kubernetes")

    assert contents(search_memories(alice, "kubernetse", mode="keyword")) == []
    result = search_memories(alice, "kubernetse", mode="vector")
    assert contents(result) == ["The cluster uses kubernetes"]
    assert result.memories[0].parts["vector_rank"] == 1


def test_a_memory_without_an_embedding_is_found_by_keyword(alice):
    memory = services.memory_create(owner=alice, content="Invoices are due on the 5th")
    assert memory.embedding is None

    assert contents(search_memories(alice, "invoices due")) == ["Invoices are due on the 5th"]


def test_score_parts_explain_the_ranking(alice):
    important = remember(alice, "Deadline for the bridge report is March", importance=1.0)
    minor = remember(alice, "Deadline for the bridge report is March", importance=0.1)

    result = search_memories(alice, "bridge report deadline")

    assert [item.memory.pk for item in result.memories] == [important.pk, minor.pk]
    parts = result.memories[0].parts
    assert set(parts) >= {"relevance", "importance", "confidence", "recency", "use"}
    assert parts["keyword_rank"] is not None and parts["vector_rank"] is not None
    assert result.memories[0].score > result.memories[1].score


def test_recent_and_used_memories_rank_higher(alice):
    old = remember(alice, "Standup happens at nine")
    Memory.objects.filter(pk=old.pk).update(valid_from=timezone.now() - timedelta(days=200))
    fresh = remember(alice, "Standup happens at nine")
    Memory.objects.filter(pk=fresh.pk).update(access_count=40)

    result = search_memories(alice, "standup")

    assert [item.memory.pk for item in result.memories] == [fresh.pk, old.pk]
    assert result.memories[0].parts["recency"] > result.memories[1].parts["recency"]
    assert result.memories[0].parts["use"] > 0


def test_as_of_answers_what_was_true_then(alice):
    before = timezone.now() - timedelta(days=10)
    old = remember(alice, "Alice lives in Berlin", valid_from=before - timedelta(days=100))
    new = remember(alice, "Alice lives in Paris", valid_from=before + timedelta(days=5))
    services.memory_supersede(old=old, new=new, actor=alice)

    assert contents(search_memories(alice, "where does Alice live")) == ["Alice lives in Paris"]
    assert contents(search_memories(alice, "where does Alice live", as_of=before)) == [
        "Alice lives in Berlin"
    ]


def test_deleted_forgotten_pending_and_rejected_are_not_recalled(alice):
    deleted = remember(alice, "Budget is ten thousand")
    services.memory_delete(memory=deleted, actor=alice)
    forgotten = remember(alice, "Budget is twenty thousand")
    Memory.objects.filter(pk=forgotten.pk).update(forgotten_at=timezone.now())
    remember(alice, "Budget is thirty thousand", status="pending")
    remember(alice, "Budget is forty thousand", status="rejected")
    remember(alice, "Budget is fifty thousand")

    assert contents(search_memories(alice, "budget thousand")) == ["Budget is fifty thousand"]


def test_filters_and_threshold(alice, project):
    remember(alice, "Tea preference: green tea", kind="preference", tags=["drinks"])
    remember(alice, "Tea supplier is in Hangzhou", kind="fact", tags=["drinks", "suppliers"])
    remember(alice, "Tea budget approved", kind="decision", scope=Scope.PROJECT, project=project)
    old = remember(alice, "Tea was served in 2020")
    Memory.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=900))

    def found(**filters):
        return sorted(contents(search_memories(alice, "tea", filters=MemoryFilters(**filters))))

    assert found(kinds=("preference",)) == ["Tea preference: green tea"]
    assert found(scopes=("project",)) == ["Tea budget approved"]
    assert found(project_ids=(project.pk,)) == ["Tea budget approved"]
    assert found(tags=("drinks", "suppliers")) == ["Tea supplier is in Hangzhou"]
    assert found(created_before=timezone.now() - timedelta(days=365)) == ["Tea was served in 2020"]
    assert "Tea was served in 2020" not in found(created_after=timezone.now() - timedelta(days=365))
    everything = search_memories(alice, "tea")
    cut = everything.memories[1].score
    strong = search_memories(alice, "tea", min_score=cut)
    assert len(strong.memories) == 2
    assert all(item.score >= cut for item in strong.memories)


def test_who_sees_what(alice, bob, charlie, project):
    remember(alice, "Alice's private note about the rail survey")
    remember(alice, "Rail survey uses the CGCS2000 datum", scope=Scope.PROJECT, project=project)

    assert len(search_memories(alice, "rail survey").memories) == 2
    assert contents(search_memories(bob, "rail survey")) == ["Rail survey uses the CGCS2000 datum"]
    assert contents(search_memories(charlie, "rail survey")) == []
    # Keyword search alone, whose index narrows by owner and project lexemes.
    assert len(search_memories(alice, "rail survey", mode="keyword").memories) == 2
    assert contents(search_memories(bob, "rail survey", mode="keyword")) == [
        "Rail survey uses the CGCS2000 datum"
    ]
    # Words that look like another user's access lexeme give no access.
    remember(charlie, f"ownerid{alice.pk} rail survey")
    assert len(search_memories(alice, "rail survey", mode="keyword").memories) == 2


def test_conversation_memories_only_for_their_conversation(alice):
    from conversations.models import Conversation

    chat = Conversation.objects.create(owner=alice, external_id="chat-1")
    other = Conversation.objects.create(owner=alice, external_id="chat-2")
    remember(alice, "We are debugging the parser", scope=Scope.CONVERSATION, conversation=chat)

    def ids(**kwargs):
        return list(candidates(alice, **kwargs).values_list("content", flat=True))

    assert ids(conversation=chat, all_conversations=False) == ["We are debugging the parser"]
    assert ids(conversation=other, all_conversations=False) == []
    assert ids(all_conversations=False) == []


def test_base_queryset_is_searched_within_visibility(alice, charlie):
    remember(alice, "Piano lessons on Tuesday")
    trashed = remember(alice, "Piano tuner phone number")
    services.memory_delete(memory=trashed, actor=alice)
    remember(charlie, "Piano recital in June")

    result = search_memories(alice, "piano", base_queryset=Memory.objects.in_trash())

    assert contents(result) == ["Piano tuner phone number"]


def test_small_user_among_a_large_table_still_gets_vector_hits(alice):
    """pgvector 0.6 filters HNSW results after the scan: the exact plan must serve small users."""
    crowd = make_user("crowd@example.com")
    text = "favourite editor is neovim with a dark theme"
    vector = vector_literal(get_provider().embed([text])[0])
    model = get_provider().model_name
    from django.db import connection

    with connection.cursor() as cursor:
        # 3,000 of someone else's memories that are all closer to the query than alice's.
        cursor.execute(
            "INSERT INTO memoryapp_memory (owner_id, scope, kind, content, tags, importance, "
            "confidence, origin, pinned, status, valid_from, created_at, updated_at, "
            "access_count, evidence, metadata, revision, embedding, embedding_model, "
            "search_document) "
            "SELECT %s, 'user', 'fact', %s, '{}', 0.8, 0.8, 'manual', false, 'active', now(), "
            "now(), now(), 0, '[]', '{}', 1, %s::vector, %s, '' FROM generate_series(1, 3000)",
            [crowd.pk, text, vector, model],
        )
        cursor.execute("ANALYZE memoryapp_memory")
        cursor.execute("SET LOCAL hnsw.ef_search = 40")
    mine = remember(alice, "my editor is neovim")

    search = vector_search(
        candidates(alice), get_provider().embed([text])[0], get_provider().model_name, 10
    )
    hits = search.hits()

    assert search.plan == "exact"
    assert [memory_id for memory_id, _similarity in hits] == [mine.pk]
    assert contents(search_memories(alice, text, mode="vector")) == ["my editor is neovim"]


def test_keyword_search_ranks_by_bm25_any_term_matching(alice):
    from search import keyword

    one = remember(alice, "Bridge bridge bridge inspection")
    three = remember(alice, "Budget report for the bridge")
    two = remember(alice, "The bridge budget")
    also_one = remember(alice, "Bridge photos")
    chinese = remember(alice, "预算 报告 桥")
    remember(alice, "Lunch at noon")

    for access in ((), keyword.access_lexemes(alice, [])):
        hits = keyword.keyword_hits(candidates(alice), "bridge budget report", 10, access)
        # Any term matches, more (and rarer) terms rank higher; repeating a term does not
        # count twice (both one-term memories have two lexemes): equal scores go by id.
        assert [memory_id for memory_id, _score in hits] == [
            three.pk,
            two.pk,
            one.pk,
            also_one.pk,
        ]
        assert hits[0][1] > hits[1][1] > hits[2][1] == hits[3][1] > 0
    # A lone CJK character matches as a prefix, and counts.
    hits = keyword.keyword_hits(candidates(alice), "预算 报告 桥", 10)
    assert [memory_id for memory_id, _score in hits] == [chinese.pk]


def test_a_small_pool_is_counted_by_the_search_and_an_empty_one_not_searched(alice):
    """No round trip of its own counts a small pool for BM25; the search's statement counts
    it first, and does not look for matches in an empty one (a user who stored no messages
    yet, among many who did)."""
    remember(alice, "Bridge photos")

    pool = candidates(alice).filter(pk=-1)
    with CaptureQueriesContext(connection) as captured:
        query = keyword.keyword_sql(pool, "bridge", 10)
    assert query is not None
    sql, params = query
    assert not any("AVG(" in query["sql"].upper() for query in captured)
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    matches = plan.split("CTE hit")[1].split("CTE idf")[0]
    scans = [line for line in matches.splitlines() if " Scan " in line and "CTE Scan" not in line]
    assert scans and all("(never executed)" in line for line in scans), plan
    assert keyword.keyword_hits(pool, "bridge", 10) == []
    assert len(keyword.keyword_hits(candidates(alice), "bridge", 10)) == 1


def test_the_keyword_indexes_keep_no_pending_list():
    """Every search would read a GIN index's pending list in full (migration 0007)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, reloptions FROM pg_class "
            "WHERE relname IN ('memory_search_idx', 'memory_search_access_idx')"
        )
        options = dict(cursor.fetchall())
    assert options == {
        "memory_search_idx": ["fastupdate=off"],
        "memory_search_access_idx": ["fastupdate=off"],
    }


def test_terms_in_most_memories_are_left_out_of_keyword_search(alice, monkeypatch):
    from django.db import connection

    from search import keyword, table_statistics

    for n in range(40):
        remember(alice, f"Project meeting notes number {n}")
    target = remember(alice, "Project budget for the bridge")
    table_statistics._table_statistics.clear()
    assert len(keyword.keyword_hits(candidates(alice), "project bridge", 100)) == 41

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memoryapp_memory")
    table_statistics._table_statistics.clear()
    # As if the table were large: here one row is already 2.4% of it.
    monkeypatch.setattr(table_statistics, "MAX_TERM_SHARE", 0.5)
    monkeypatch.setattr(table_statistics, "MIN_COMMON_ROWS", 10)

    assert "project" in table_statistics.table_statistics("memoryapp_memory").common_lexemes
    hits = keyword.keyword_hits(candidates(alice), "project bridge", 100)
    assert [memory_id for memory_id, _rank in hits] == [target.pk]
    # A query of common terms only still searches them.
    assert len(keyword.keyword_hits(candidates(alice), "project", 100)) == 41
    table_statistics._table_statistics.clear()


def test_keyword_and_vector_search_are_one_statement(alice):
    """One round trip: the database runs both searches, the caller waits once."""
    remember(alice, "I deploy the survey app with Docker Compose")
    remember(alice, "The cluster uses kubernetes")

    with CaptureQueriesContext(connection) as captured:
        found = search_memories(alice, "docker kubernetes")

    searches = [query["sql"] for query in captured if "WITH keyword" in query["sql"]]
    assert len(searches) == 1
    assert "<=>" in searches[0]  # the vector search, in the same statement
    assert sorted(contents(found)) == [
        "I deploy the survey app with Docker Compose",
        "The cluster uses kubernetes",
    ]
    assert all(item.parts["keyword_rank"] and item.parts["vector_rank"] for item in found.memories)


def test_inside_a_transaction_keyword_search_stays_on_its_connection(alice):
    """Another connection would not see what the open transaction wrote."""
    remember(alice, "Invoices are due on the 5th")

    assert contents(search_memories(alice, "invoices", mode="keyword")) == [
        "Invoices are due on the 5th"
    ]


def test_vectors_are_bucketed_by_their_pool(alice, project):
    personal = remember(alice, "Tea at nine")
    shared = remember(alice, "The survey uses CGCS2000", scope=Scope.PROJECT, project=project)

    personal.refresh_from_db()
    shared.refresh_from_db()

    assert personal.vector_bucket == vector_bucket(alice.pk) == alice.pk % VECTOR_BUCKETS
    assert shared.vector_bucket == vector_bucket(project.pk)
    assert buckets.pool_buckets(alice.pk, [project.pk]) == tuple(
        sorted({alice.pk % VECTOR_BUCKETS, project.pk % VECTOR_BUCKETS})
    )


def test_a_large_pool_is_searched_through_its_buckets_hnsw_indexes(alice, project, monkeypatch):
    personal = remember(alice, "my editor is neovim with a dark theme")
    shared = remember(alice, "the team editor is neovim", scope=Scope.PROJECT, project=project)
    remember(make_user("crowd@example.com"), "my editor is neovim with a dark theme")
    # Every candidate set counts as large.
    monkeypatch.setattr(vectors, "EXACT_VECTOR_LIMIT", 0)
    vector = get_provider().embed(["neovim editor"])[0]
    model = get_provider().model_name
    pool = candidates(alice)
    searched = buckets.pool_buckets(alice.pk, [project.pk])
    # Rows of earlier tests, rolled back, stay in the HNSW graph until a vacuum; enough of
    # them crowd an approximate search's ef_search out of the three live rows. A fresh index
    # holds only these (as autovacuum keeps a real table's).
    with connection.cursor() as cursor:
        for bucket in searched:
            cursor.execute(f"REINDEX INDEX {HNSW_INDEX_PREFIX}{bucket}")

    search = vector_search(pool, vector, model, 10, searched)
    hits = search.hits()

    assert search.plan == "hnsw"
    assert {memory_id for memory_id, _similarity in hits} == {personal.pk, shared.pk}
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        sql, params = vectors.hnsw_nearest_sql(
            embedded_with(pool, model), vector, 10, vector_bucket(alice.pk)
        )
        cursor.execute(f"EXPLAIN {sql}", params)
        plan_text = "\n".join(row[0] for row in cursor.fetchall())
    assert f"{HNSW_INDEX_PREFIX}{vector_bucket(alice.pk)}" in plan_text


def test_a_search_is_as_wide_as_its_buckets_indexes_are_large():
    """Buckets are uneven: a user whose bucket holds few rows besides theirs searches its
    index narrowly, whatever the table's size; an index never counted stands for an even
    share of the table."""
    statistics = table_statistics.TableStatistics(
        rows=1_000_000, common_lexemes={}, bucket_vectors={1: 990_000, 2: 10_000}
    )

    assert statistics.index_rows((2,)) == 10_000
    assert statistics.index_rows((1, 2)) == 1_000_000
    assert statistics.index_rows((3,)) == 1_000_000 // VECTOR_BUCKETS


def test_a_short_hnsw_list_is_searched_as_wide_as_a_full_one():
    """HNSW is approximate: a search for its 10 nearest (past turns) is as wide as one for
    HNSW_EXPECTED_HITS, which finds more of the true nearest, and wider for a longer list."""
    size = 10**9  # candidates: about every row of the index

    expected = vectors.hnsw_ef_search(
        vectors.HNSW_EXPECTED_HITS, size, buckets.ALL_BUCKETS, "memoryapp_memory"
    )

    assert expected == vectors.HNSW_EXPECTED_HITS
    assert vectors.hnsw_ef_search(10, size, buckets.ALL_BUCKETS, "memoryapp_memory") == expected
    assert (
        vectors.hnsw_ef_search(expected + 5, size, buckets.ALL_BUCKETS, "memoryapp_memory")
        == expected + 5
    )


@pytest.mark.django_db(transaction=True)
def test_a_forked_process_searches_with_its_own_side_connections(alice):
    """A process forked after the parent used its side connections (the benchmark's
    clients, a pre-forking server) has none of the parent's threads."""
    remember(alice, "I deploy the survey app with Docker Compose")
    assert contents(search_memories(alice, "docker"))
    connection.close()
    read, write = os.pipe()

    child = os.fork()
    if child == 0:
        signal.alarm(30)  # A child stuck waiting for the parent's threads dies.
        try:
            found = contents(search_memories(alice, "docker"))
            os.write(write, "|".join(found).encode())
            side_connections.finish()
            connection.close()
        finally:
            os._exit(0)
    os.close(write)
    _pid, status = os.waitpid(child, 0)

    assert os.read(read, 1000).decode() == "I deploy the survey app with Docker Compose"
    assert os.waitstatus_to_exitcode(status) == 0


def test_keyword_search_takes_the_rarest_terms_up_to_a_number_of_rows(alice, monkeypatch):
    """A big user's keyword search reads every memory its terms match: the terms it keeps
    are the rarest, and together in at most MAX_MATCH_ROWS memories."""
    for word, count in (("alpha", 20), ("beta", 10), ("gamma", 3)):
        for n in range(count):
            services.memory_create(owner=alice, content=f"{word} {n}")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memoryapp_memory")
    table_statistics._table_statistics.clear()
    monkeypatch.setattr(table_statistics, "MAX_TERM_SHARE", 0.9)
    monkeypatch.setattr(keyword, "MAX_MATCH_ROWS", 14)

    # gamma (3 of 33 memories) and beta (10) match 13 together; with alpha (20) 33.
    terms = keyword._query_terms("alpha beta gamma", "memoryapp_memory")
    assert [term.tsquery for term in terms] == ["'gamma'", "'beta'"]
    table_statistics._table_statistics.clear()


def test_the_candidates_size_is_estimated_once_whatever_the_time_asked(alice):
    from django.test.utils import CaptureQueriesContext

    remember(alice, "Tea at nine")
    model = get_provider().model_name

    with CaptureQueriesContext(connection) as captured:
        for as_of in (timezone.now(), timezone.now() + timedelta(seconds=5)):
            vectors.vector_plan(embedded_with(candidates(alice, as_of=as_of), model))
        vectors.vector_plan(
            embedded_with(candidates(alice, as_of=as_of).filter(pinned=True), model)
        )

    explains = [query["sql"] for query in captured if query["sql"].startswith("EXPLAIN")]
    assert len(explains) == 2


def test_a_query_s_words_are_looked_up_once_for_all_its_searches(alice):
    """The preview starts the lookup early; both its searches then use what it found."""
    keyword.start_query_lexemes("We went hiking in the Alps")

    with CaptureQueriesContext(connection) as captured:
        lexemes = keyword.query_lexemes("We went hiking in the Alps")

    assert not captured.captured_queries
    assert ("hike", False) in lexemes
    assert not any(lexeme in {"we", "in", "the"} for lexeme, _expanded in lexemes)
