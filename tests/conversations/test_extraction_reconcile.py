from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import MemorySettings
from conversations.extraction import reconcile
from conversations.extraction.runs import execute_run, extraction_request, run_batch
from conversations.models import ExtractionRun
from memories.models import EventAction, Memory, MemoryEvent, Origin, Scope, Status
from memories.services import (
    MemoryWrites,
    memories_create,
    memory_create,
    memory_review_accept,
    memory_undo_batch,
    new_memory,
)
from search.embeddings import get_provider
from tests.extraction_helpers import add_messages, conversation_with

pytestmark = pytest.mark.django_db


def _extract(conversation: Any, trigger: str = "manual") -> ExtractionRun:
    run = extraction_request(conversation=conversation, trigger=trigger)
    return execute_run(run.pk)


def test_near_duplicate_raises_confidence_and_keeps_the_evidence(alice: Any) -> None:
    existing = memory_create(
        owner=alice, content="Prefers Vue over React", kind="preference", confidence=0.7
    )
    conversation = conversation_with(alice, ("user", "I prefer Vue over React, as always."))
    run = _extract(conversation)
    existing.refresh_from_db()
    assert (run.status, run.candidates, run.merged, run.created) == ("succeeded", 1, 1, 0)
    assert existing.confidence == pytest.approx(0.8)
    assert existing.evidence[-1]["quote"] == "I prefer Vue over React, as always."
    assert existing.evidence[-1]["messages"] == [conversation.messages.get().pk]
    event = existing.events.first()
    assert (event.action, event.actor_label) == (EventAction.MERGED, "extraction")
    assert Memory.objects.count() == 1


def test_only_candidates_no_memory_matches_by_words_are_embedded(
    alice: Any, monkeypatch: Any
) -> None:
    """A candidate merged by words needs no vector; a new one is stored with its own, so it
    needs no embedding job."""
    memory_create(owner=alice, content="Prefers Vue over React", kind="preference")
    provider = get_provider()
    embedded: list[str] = []
    embed = provider.embed

    def recording(texts: list[str]) -> list[list[float]]:
        embedded.extend(texts)
        return embed(texts)

    monkeypatch.setattr(provider, "embed", recording)
    conversation = conversation_with(
        alice, ("user", "I prefer Vue over React. I plan to learn Rust this year.")
    )

    run = _extract(conversation)

    assert (run.merged, run.created) == (1, 1)
    created = Memory.objects.get(origin=Origin.EXTRACTED)
    # (The turn itself is embedded too, for episodic recall.)
    assert created.content in embedded
    assert not any(text.startswith("Prefers Vue") for text in embedded)
    assert created.embedding is not None and created.embedding_model == provider.model_name


def test_confidence_never_exceeds_one(alice: Any) -> None:
    existing = memory_create(
        owner=alice, content="Prefers Vue over React", kind="preference", confidence=0.95
    )
    _extract(conversation_with(alice, ("user", "I prefer Vue over React")))
    existing.refresh_from_db()
    assert existing.confidence == 1.0


def test_chinese_near_duplicate_by_character_bigrams(alice: Any) -> None:
    existing = memory_create(owner=alice, content="需要安装 GDAL 才能导入 shapefile", kind="lesson")
    run = _extract(conversation_with(alice, ("user", "记住：需要先安装 GDAL 才能导入 shapefile")))
    assert run.merged == 1, (run.created, list(Memory.objects.values_list("content", flat=True)))
    existing.refresh_from_db()
    assert existing.confidence == pytest.approx(0.9)


def test_vector_near_duplicate_when_words_alone_do_not_match(alice: Any, settings: Any) -> None:
    settings.MEMORY_DUPLICATE_JACCARD = 1.01  # words never match: only vectors decide
    provider = get_provider()
    existing = memory_create(owner=alice, content="Plans to learn Rust", kind="goal")
    Memory.objects.filter(pk=existing.pk).update(
        embedding=provider.embed(["Plans to learn Rust"])[0],
        embedding_model=provider.model_name,
    )
    run = _extract(conversation_with(alice, ("user", "I plan to learn Rust")))
    assert run.merged == 1
    unrelated = _extract(conversation_with(alice, ("user", "I plan to visit Chengdu in May")))
    assert unrelated.created == 1


def test_a_big_pool_finds_vector_near_duplicates_through_the_index_uncounted(
    alice: Any, settings: Any, monkeypatch: Any
) -> None:
    """Over EXACT_SEARCH_MAX_ROWS, by the planner's estimate, the HNSW index is searched, with
    its search width set in the same round trip and without counting the pool."""
    monkeypatch.setattr(reconcile, "EXACT_SEARCH_MAX_ROWS", 2)
    reconcile._pool_estimates.clear()
    settings.MEMORY_DUPLICATE_JACCARD = 1.01  # words never match: only vectors decide
    provider = get_provider()
    for topic in ("chess", "sailing", "pottery", "climbing", "baking", "cycling"):
        memory_create(owner=alice, content=f"Enjoys {topic} at weekends", kind="preference")
    existing = memory_create(owner=alice, content="Plans to learn Rust", kind="goal")
    Memory.objects.update(embedding_model=provider.model_name)
    for memory in Memory.objects.all():
        Memory.objects.filter(pk=memory.pk).update(embedding=provider.embed([memory.content])[0])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memoryapp_memory")

    with CaptureQueriesContext(connection) as captured:
        run = _extract(conversation_with(alice, ("user", "I plan to learn Rust")))

    assert (run.merged, run.created) == (1, 0)
    existing.refresh_from_db()
    assert existing.evidence[-1]["quote"] == "I plan to learn Rust"
    sent = [query["sql"] for query in captured]
    assert any("set_config('hnsw.ef_search'" in sql and "LATERAL" in sql for sql in sent)
    assert not any("LIMIT 2001) pool" in sql for sql in sent)


def test_contradiction_supersedes_the_older_memory(alice: Any) -> None:
    _extract(conversation_with(alice, ("user", "I prefer Vue for frontend work")))
    older = Memory.objects.get()
    run = _extract(conversation_with(alice, ("user", "Actually I now prefer React")))
    older.refresh_from_db()
    newer = Memory.objects.exclude(pk=older.pk).get()
    assert (run.created, run.superseded) == (1, 1)
    assert older.superseded_by == newer
    assert older.valid_until == newer.valid_from
    assert newer.content == "Prefers React" and newer.valid_until is None
    assert older.events.first().action == EventAction.SUPERSEDED
    assert list(Memory.objects.in_effect()) == [newer]


def test_project_fact_contradiction_in_chinese_and_english(alice: Any, project: Any) -> None:
    first = conversation_with(
        alice, ("user", "The project uses WGS84 for coordinates"), project=project
    )
    _extract(first)
    wgs = Memory.objects.get()
    assert (wgs.scope, wgs.project) == (Scope.PROJECT, project)
    second = conversation_with(alice, ("user", "项目使用 CGCS2000 坐标系"), project=project)
    run = _extract(second)
    wgs.refresh_from_db()
    assert run.superseded == 1
    assert wgs.superseded_by.content == "项目使用 CGCS2000 坐标系"


def test_unrelated_preferences_do_not_contradict(alice: Any) -> None:
    _extract(conversation_with(alice, ("user", "I prefer Vue for frontend work")))
    run = _extract(conversation_with(alice, ("user", "I prefer tabs over spaces")))
    assert (run.created, run.superseded) == (1, 0)
    assert Memory.objects.in_effect().count() == 2


def test_rejected_before_is_not_created_again(alice: Any) -> None:
    rejected = memory_create(
        owner=alice, content="Prefers Vue over React", kind="preference", status=Status.REJECTED
    )
    run = _extract(conversation_with(alice, ("user", "I prefer Vue over React")))
    assert (run.created, run.merged, run.skipped) == (0, 0, 1)
    assert Memory.objects.count() == 1
    event = rejected.events.first()
    assert (event.action, event.actor_label) == (EventAction.REJECTED, "extraction")


def test_pending_contradiction_supersedes_on_acceptance(alice: Any) -> None:
    _extract(conversation_with(alice, ("user", "I prefer Vue for frontend work")))
    older = Memory.objects.get()
    MemorySettings.objects.filter(user=alice).update(review_extracted=True)
    _extract(conversation_with(alice, ("user", "I now prefer React")))
    pending = Memory.objects.get(status=Status.PENDING)
    older.refresh_from_db()
    assert pending.metadata["supersedes"] == older.pk
    assert older.superseded_by is None
    memory_review_accept(memory=pending, actor=alice)
    older.refresh_from_db()
    assert older.superseded_by_id == pending.pk


def test_sensitive_candidates_are_dropped_and_counted(alice: Any) -> None:
    conversation = conversation_with(
        alice,
        (
            "user",
            "I always use the token ghp_abcdefghijklmnopqrstuvwxyz0123456789 for CI. I prefer Vue.",
        ),
    )
    run = _extract(conversation)
    assert (run.candidates, run.dropped_sensitive, run.created) == (2, 1, 1)
    assert list(Memory.objects.values_list("content", flat=True)) == ["Prefers Vue"]
    assert "ghp_" not in str(ExtractionRun.objects.values().get(pk=run.pk))


def test_extracted_memories_record_origin_evidence_and_one_batch(alice: Any) -> None:
    conversation = conversation_with(alice, ("user", "I prefer Vue. We use pytest for tests."))
    run = _extract(conversation)
    memories = Memory.objects.order_by("pk")
    assert all(m.origin == Origin.EXTRACTED and m.conversation == conversation for m in memories)
    assert memories[0].evidence[0] | {"run": None} == {
        "conversation": conversation.pk,
        "messages": [conversation.messages.get().pk],
        "quote": "I prefer Vue.",
        "run": None,
    }
    batches = set(MemoryEvent.objects.values_list("batch", flat=True))
    assert len(batches) == 1 and run.created == 2
    assert memories[0].created_at <= timezone.now()


def test_one_run_merges_supersedes_and_skips_with_events_in_its_batch(alice: Any) -> None:
    duplicate = memory_create(
        owner=alice, content="The project uses pytest for tests", kind="fact", confidence=0.6
    )
    _extract(conversation_with(alice, ("user", "I prefer Vue for frontend work")))
    vue = Memory.objects.get(content="Prefers Vue for frontend work")
    rejected = memory_create(
        owner=alice, content="Plans to learn Rust", kind="goal", status=Status.REJECTED
    )
    conversation = conversation_with(
        alice,
        ("user", "We use pytest for tests."),
        ("user", "I now prefer React."),
        ("user", "I plan to learn Rust."),
        ("user", "I prefer tabs over spaces. I prefer tabs over spaces!"),
    )
    run = _extract(conversation)
    assert (run.created, run.merged, run.superseded, run.skipped) == (2, 2, 1, 1)
    duplicate.refresh_from_db()
    vue.refresh_from_db()
    react = Memory.objects.get(content="Prefers React")
    tabs = Memory.objects.get(content="Prefers tabs over spaces")
    assert duplicate.confidence == pytest.approx(0.7) and duplicate.revision == 2
    assert (vue.superseded_by, vue.valid_until) == (react, react.valid_from)
    assert tabs.confidence == pytest.approx(0.9) and len(tabs.evidence) == 2
    batch = run_batch(run.pk)
    in_batch = MemoryEvent.objects.filter(batch=batch).order_by("id")
    assert [(e.memory_id, e.action) for e in in_batch] == [
        (react.pk, EventAction.CREATED),
        (tabs.pk, EventAction.CREATED),
        (duplicate.pk, EventAction.MERGED),
        (vue.pk, EventAction.SUPERSEDED),
        (tabs.pk, EventAction.MERGED),
    ]
    created = in_batch.get(memory=tabs, action=EventAction.CREATED)
    assert (created.after["revision"], created.after["confidence"]) == (1, 0.8)
    merged = in_batch.filter(memory=duplicate).get()
    assert (merged.before["confidence"], merged.after["confidence"]) == (0.6, pytest.approx(0.7))
    assert in_batch.get(memory=vue).after["superseded_by_id"] == react.pk
    assert rejected.events.first().action == EventAction.REJECTED
    memory_undo_batch(batch=batch, actor=alice)
    vue.refresh_from_db()
    duplicate.refresh_from_db()
    assert vue.superseded_by is None and duplicate.confidence == pytest.approx(0.6)
    assert list(Memory.objects.in_effect().order_by("pk")) == [duplicate, vue]


def test_a_run_contradicting_itself_keeps_the_last_statement(alice: Any) -> None:
    MemorySettings.objects.filter(user=alice).update(review_extracted=True)
    _extract(conversation_with(alice, ("user", "I prefer Vue for frontend. I now prefer React.")))
    vue, react = Memory.objects.order_by("pk")
    assert (vue.status, react.status) == (Status.PENDING, Status.PENDING)
    assert react.metadata["supersedes"] == vue.pk
    memory_review_accept(memory=react, actor=alice)
    vue.refresh_from_db()
    assert vue.superseded_by == react


def test_a_run_costs_the_same_queries_for_two_candidates_or_eight(alice: Any) -> None:
    def queries(*goals: str) -> int:
        conversation = conversation_with(alice, *[("user", f"I plan to {goal}.") for goal in goals])
        run = extraction_request(conversation=conversation, trigger="manual")
        with CaptureQueriesContext(connection) as captured:
            finished = execute_run(run.pk)
        assert finished.created == len(goals)
        return len(captured)

    queries("learn Go")  # The pool's size estimate is read once, then kept a few minutes.
    two = queries("learn Rust", "visit Chengdu in May")
    eight = queries(
        "buy a bicycle",
        "read Dostoevsky",
        "climb Emei Shan",
        "study Japanese grammar",
        "paint the kitchen yellow",
        "adopt a greyhound",
        "run a marathon in autumn",
        "write a compiler",
    )
    assert two == eight


def test_new_memories_keep_the_vector_reconciliation_made(alice: Any, monkeypatch: Any) -> None:
    queued: list[list[int]] = []
    monkeypatch.setattr("memories.services._enqueue_embedding", queued.append)
    _extract(conversation_with(alice, ("user", "I plan to learn Rust this year")))
    memory = Memory.objects.get()
    provider = get_provider()
    assert memory.embedding_model == provider.model_name
    assert memory.embedding is not None
    assert list(memory.embedding) == pytest.approx(provider.embed([memory.content])[0], abs=1e-6)
    assert queued == [[]]


def test_without_vectors_new_memories_wait_for_the_embedding_job(
    alice: Any, monkeypatch: Any
) -> None:
    queued: list[list[int]] = []
    monkeypatch.setattr("memories.services._enqueue_embedding", queued.append)

    def unavailable(texts: Any) -> Any:
        raise RuntimeError("embedding service down")

    monkeypatch.setattr(get_provider(), "embed", unavailable)
    run = _extract(conversation_with(alice, ("user", "I plan to learn Rust")))
    memory = Memory.objects.get()
    assert run.created == 1 and memory.embedding is None and memory.embedding_model == ""
    assert queued == [[memory.pk]]


def test_merges_update_rows_in_place(alice: Any) -> None:
    """A merge writes no indexed column, and each page has room for its rows' new versions
    (migration 0009): the UPDATE is heap-only, without an entry in any index (an HNSW insert
    costs milliseconds), even when one run merges into every memory of a page."""
    contents = ["Prefers Vue over React", "Uses pytest for tests", "Deploys with Ansible"]
    memories = [new_memory(owner=alice, content=content) for content in contents]
    for memory, vector in zip(memories, get_provider().embed(contents), strict=True):
        memory.embedding, memory.embedding_model = vector, get_provider().model_name
    memories_create(memories=memories, actor=None)

    def updates() -> tuple[int, int]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_stat_get_xact_tuples_updated(oid), "
                "pg_stat_get_xact_tuples_hot_updated(oid) "
                "FROM pg_class WHERE oid = 'memoryapp_memory'::regclass"
            )
            return cursor.fetchone()

    updated_before, hot_before = updates()
    writes = MemoryWrites(actor_label="test", batch=None)
    for memory in memories:
        writes.merge_evidence(memory, evidence={"quote": memory.content}, confidence_boost=0.1)
    writes.save()
    updated, hot = updates()

    assert updated - updated_before == hot - hot_before == len(memories)


def test_memory_writes_store_a_new_memory_as_bulk_create_does(alice: Any, project: Any) -> None:
    """MemoryWrites inserts new memories with SQL of its own: every stored field as
    bulk_create writes it (tags, vector, JSON, times, what the search trigger derives)."""
    conversation = conversation_with(alice, ("user", "Our survey uses CGCS2000."))
    valid_from = timezone.now() - timezone.timedelta(days=3)

    def memory() -> Memory:
        created = new_memory(
            owner=alice,
            content="The survey uses CGCS2000 coordinates, 测量数据 included",
            kind="decision",
            scope=Scope.PROJECT,
            project=project,
            conversation=conversation,
            tags=["GIS", "survey"],
            confidence=0.75,
            origin=Origin.EXTRACTED,
            status=Status.PENDING,
            evidence=[{"conversation": conversation.pk, "quote": 'It\'s "CGCS2000"', "run": 1}],
            metadata={"subject": "coordinate system", "value": "cgcs2000", "run": 1},
            valid_from=valid_from,
        )
        (created.embedding,) = get_provider().embed([created.content])
        created.embedding_model = get_provider().model_name
        return created

    (by_bulk_create,) = Memory.objects.bulk_create([memory()])
    writes = MemoryWrites(actor_label="test", batch=None)
    writes.create(memory())
    (by_writes,) = writes.save()

    def stored(pk: int) -> dict[str, Any]:
        row = Memory.objects.values().get(pk=pk)
        return {
            field: str(value)
            for field, value in row.items()
            if field not in ("id", "created_at", "updated_at")
        }

    assert by_writes.pk != by_bulk_create.pk
    assert stored(by_writes.pk) == stored(by_bulk_create.pk)
    assert stored(by_writes.pk)["search_vector"]
    by_writes.save(update_fields=["pinned"])  # a saved instance, as bulk_create leaves it


def test_a_secret_given_in_context_drops_the_whole_memory(alice: Any) -> None:
    conversation = conversation_with(
        alice,
        ("user", "I changed my wifi password. The new one is Brisket4life! I moved to Denver."),
        ("assistant", "Got it. Did your sister change hers too?"),
        ("user", "My sister? Her PIN is the same as mine, it's 4821."),
    )
    run = _extract(conversation)
    contents = list(Memory.objects.values_list("content", flat=True))
    assert contents == ["Moved to Denver"]
    assert run.dropped_sensitive >= 1
    stored = str(list(Memory.objects.values())) + str(ExtractionRun.objects.values().get())
    assert "Brisket4life" not in stored and "4821" not in stored


def test_a_secret_answering_the_turn_before_the_window_is_dropped(alice: Any) -> None:
    conversation = conversation_with(alice, ("user", "I think I changed the wifi password?"))
    _extract(conversation)
    add_messages(conversation, ("user", "Yes, it's Brisket4life! since Monday, I checked."))
    run = _extract(conversation)
    assert (run.candidates, run.dropped_sensitive) == (1, 1)
    assert not Memory.objects.filter(content__contains="Brisket4life").exists()


def test_only_the_clause_giving_a_secret_is_dropped_the_facts_beside_it_are_kept(
    alice: Any,
) -> None:
    conversation = conversation_with(
        alice,
        (
            "user",
            "I move 20% of my salary into savings every month, and my subscriptions go on my"
            " Monzo card: 5355 2210 4471 9088, exp 11/27, CVC 412.",
        ),
        ("user", "我住在杭州，身份证号 330106199205183420，紧急联系人是我妹妹林夕。"),
    )
    run = _extract(conversation)
    stored = " ".join(Memory.objects.values_list("content", flat=True))
    assert "Monzo" in stored and "林夕" in stored and "杭州" in stored
    assert run.dropped_sensitive == 2
    for secret in ("5355", "11/27", "412", "330106"):
        assert secret not in stored


def _stored(conversation: Any) -> list[tuple[str, str]]:
    _extract(conversation)
    return sorted(Memory.objects.values_list("kind", "content"))


def test_a_reply_that_says_what_was_decided_is_the_decision_in_the_users_words(
    alice: Any,
) -> None:
    conversation = conversation_with(
        alice,
        ("assistant", "You could use Redis as the Celery broker too and retire RabbitMQ."),
        ("user", "OK, let's do that. Redis as the broker, RabbitMQ goes."),
        ("assistant", "可以在详情接口前加一层 Redis 缓存，过期时间设10分钟左右。"),
        ("user", "行，就按你说的，上 Redis 缓存。"),
    )
    assert _stored(conversation) == [
        ("decision", "Redis as the broker, RabbitMQ goes"),
        ("decision", "上 Redis 缓存"),
    ]


@pytest.mark.parametrize(
    "reply", ["Yeah, yeah. What's band steering, by the way?", "ok", "嗯", "好的，那代理池贵吗？"]
)
def test_a_bare_acknowledgement_adopts_no_proposal(alice: Any, reply: str) -> None:
    conversation = conversation_with(
        alice,
        ("assistant", "I'd keep that in a password manager. 可以买个代理池服务轮换 IP。"),
        ("user", reply),
    )
    assert _stored(conversation) == []


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        (
            "What does a booking need to know? Usually the customer, the dog and the time slot.",
            "yeah exactly that. plus some dogs need two slots if they're big",
        ),
        (
            "那时间比较紧，大概还有七周。如果3月中旬能完成采样，3月底到4月上旬做实验分析，来得及。",
            "嗯嗯。还有个问题，我之前数据都是用Excel整理，画图用Origin，但是师兄说以后会很痛苦",
        ),
    ],
)
def test_agreeing_with_a_question_or_a_remark_decides_nothing(
    alice: Any, question: str, reply: str
) -> None:
    conversation = conversation_with(alice, ("assistant", question), ("user", reply))
    assert "decision" not in [kind for kind, _content in _stored(conversation)]


def test_a_counter_offer_is_kept_not_the_proposal_nor_the_plan_it_replaced(alice: Any) -> None:
    conversation = conversation_with(
        alice,
        ("user", "We were going to stay in Lisbon the whole time. 我本来打算自己学。"),
        ("assistant", "比如每天晚上两小时，三周过完。Two hours every evening?"),
        ("user", "两小时太多了，每天一小时吧，周末休息。"),
        ("assistant", "Two hours every evening, then?"),
        ("user", "Two hours is too much, I study for one hour every weekday."),
    )
    contents = " ".join(content for _kind, content in _stored(conversation))
    assert "一小时" in contents and "one hour" in contents
    for dropped in ("两小时", "Two hours", "Lisbon", "本来"):
        assert dropped not in contents


def test_a_retraction_takes_back_what_the_conversation_said_before(alice: Any) -> None:
    conversation = conversation_with(
        alice,
        ("user", "I read everything on my Kindle. I live in Leeds."),
        ("assistant", "Noted."),
        ("user", "Scratch the Kindle bit, though."),
        ("user", "我平时坐地铁上班。我住在上海。"),
        ("user", "刚才说的地铁那条不算。"),
    )
    contents = " ".join(content for _kind, content in _stored(conversation))
    assert "Leeds" in contents and "上海" in contents
    assert "Kindle" not in contents and "地铁" not in contents


def test_a_lesson_that_goes_on_in_the_next_sentence_is_one_lesson(alice: Any) -> None:
    conversation = conversation_with(
        alice,
        (
            "user",
            "Lesson learned: a backup that depends on plugging in a drive isn't a backup."
            " It has to run automatically.",
        ),
        ("user", "教训：改字段名要分两步走。必须先加新字段并双写。"),
    )
    lessons = [content for kind, content in _stored(conversation) if kind == "lesson"]
    assert any("backup" in lesson and "automatically" in lesson for lesson in lessons)
    assert any("两步走" in lesson and "双写" in lesson for lesson in lessons)
