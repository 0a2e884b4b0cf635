"""Episodic recall: past turns in the injection preview, beside memories."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import MemorySettings
from conversations.jobs import embed_messages
from conversations.models import MESSAGE_HNSW_INDEX_PREFIX, Conversation, Message
from core import side_connections
from memories import services
from memories.models import Memory
from recall.injection import PreviewRequest, injection_preview
from search.buckets import ALL_BUCKETS, vector_bucket
from teams.models import Project
from tests.recall_helpers import ApiClient

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)


def chat(owner, *turns, external_id="past", sent_at=None, **fields):
    """A conversation of (role, text) turns, stored and embedded as the API and job do."""
    conversation = Conversation.objects.create(
        owner=owner,
        external_id=external_id,
        participants=[{"name": "Mia", "role": "user"}, {"name": "Sam", "role": "assistant"}],
        **fields,
    )
    start = sent_at or timezone.now() - 10 * DAY
    messages = Message.objects.bulk_create(
        Message(
            conversation=conversation,
            role=role,
            content=text,
            external_id=f"{external_id}-{n}",
            position=n,
            sent_at=start + n * timedelta(minutes=1),
        )
        for n, (role, text) in enumerate(turns, start=1)
    )
    embed_messages([m.pk for m in messages])
    return conversation, messages


def preview(user, message, **fields):
    return injection_preview(user, PreviewRequest(message=message, **fields))


def episode_ids(result):
    return [episode["message_id"] for episode in result["episodes"]]


def test_past_turns_follow_the_memories_in_their_own_section(alice):
    services.memory_create(owner=alice, content="Mia likes green tea", actor=alice)
    _conversation, (question, answer, other) = chat(
        alice,
        ("assistant", "Where did you go hiking?"),
        ("user", "We hiked the Kalalau trail in Kauai"),
        ("user", "The weather was nice"),
    )

    result = preview(alice, "Kalalau trail hiking")

    assert answer.pk in episode_ids(result)
    assert other.pk not in episode_ids(result)
    episode = next(e for e in result["episodes"] if e["message_id"] == answer.pk)
    assert episode["speaker"] == "Mia" and episode["conversation_id"] == answer.conversation_id
    # The turn it answers (a question) comes with it.
    assert episode["reply_to"]["message_id"] == question.pk
    assert episode["message_ids"] == [question.pk, answer.pk]
    assert {"relevance", "keyword_rank", "dated"} <= set(episode["score_parts"])
    day = answer.sent_at.date().isoformat()
    assert (
        f"## From past conversations\n\n### {day}\n"
        "- Sam: Where did you go hiking?\n- Mia: We hiked the Kalalau trail in Kauai\n"
    ) in result["block"]
    assert result["tokens"]["episodes"] == episode["tokens"] > 0


def test_a_turn_nobody_named_is_said_by_its_role_in_the_active_language(alice):
    from django.utils import translation

    conversation, (turn,) = chat(alice, ("assistant", "The ferry leaves Piraeus at seven"))
    conversation.participants = []
    conversation.save(update_fields=["participants"])

    assert preview(alice, "ferry Piraeus")["episodes"][0]["speaker"] == "Assistant"
    with translation.override("zh-hans"):
        assert preview(alice, "ferry Piraeus")["episodes"][0]["speaker"] == "助手"
    assert episode_ids(preview(alice, "ferry Piraeus")) == [turn.pk]


def test_formats_show_the_section(alice):
    chat(alice, ("user", "Our wedding is at the Lakeside <Inn>"))

    xml = preview(alice, "wedding lakeside", fmt="xml")["block"]
    assert "<past_conversations>\n<session date=" in xml
    assert "Mia: Our wedding is at the Lakeside &lt;Inn&gt;" in xml
    assert xml.rstrip().endswith("</past_conversations>")

    data = json.loads(preview(alice, "wedding lakeside", fmt="json")["block"])
    turn = data["past_conversations"][0]["turns"][0]
    assert turn == {"speaker": "Mia", "text": "Our wedding is at the Lakeside <Inn>"}


def test_the_setting_and_the_sources_option(alice):
    memory = services.memory_create(owner=alice, content="Wedding at the Lakeside Inn", actor=alice)
    chat(alice, ("user", "Our wedding is at the Lakeside Inn"))

    both = preview(alice, "wedding lakeside")
    assert both["episodes"] and [m["id"] for m in both["memories"]] == [memory.pk]

    only_memories = preview(alice, "wedding lakeside", sources=("memories",))
    assert only_memories["episodes"] == [] and "past conversations" not in only_memories["block"]
    only_episodes = preview(alice, "wedding lakeside", sources=("episodes",))
    assert only_episodes["memories"] == [] and only_episodes["episodes"]

    MemorySettings.objects.filter(user=alice).update(reference_past_conversations=False)
    off = preview(alice, "wedding lakeside")
    assert off["episodes"] == [] and off["block"] == "## Memory\n\n### About the user\n" + (
        "- Wedding at the Lakeside Inn\n"
    )


def test_a_turn_and_the_memory_extracted_from_it_are_not_both_injected(alice):
    _conversation, (turn,) = chat(alice, ("user", "My sister Priya lives in Toronto"))
    memory = services.memory_create(
        owner=alice,
        content="Priya, Mia's sister, lives in Toronto",
        evidence=[{"messages": [turn.pk], "quote": "My sister Priya lives in Toronto"}],
        actor=alice,
    )

    result = preview(alice, "Priya Toronto")

    # The memory (the cleaned form) is kept whatever the turn scores; the turn is listed as
    # dropped for it.
    turns = preview(alice, "Priya Toronto", sources=("episodes",))["episodes"]
    assert turn.pk in episode_ids({"episodes": turns})
    assert memory.pk in [m["id"] for m in result["memories"]]
    assert turn.pk not in episode_ids(result)
    dropped = next(d for d in result["dropped"] if d["source"] == "episode")
    assert (dropped["id"], dropped["reason"]) == (turn.pk, "covered_by_memory")
    # A pinned memory always stays, and the turn it came from is not repeated.
    services.memory_set_pinned(memory=memory, pinned=True, actor=alice)
    pinned = preview(alice, "Priya Toronto")
    assert memory.pk in [m["id"] for m in pinned["memories"]]
    assert turn.pk not in episode_ids(pinned)


def test_visibility_of_past_turns(alice, bob, charlie, project):
    _c, (mine,) = chat(alice, ("user", "The survey drone flies on Tuesdays"), external_id="a")
    _c, (strangers,) = chat(charlie, ("user", "The survey drone is red"), external_id="c")
    _c, (teams,) = chat(
        bob, ("user", "The survey drone needs new rotors"), external_id="b", project=project
    )
    other_project = Project.objects.create(team=project.team, name="Other")
    _c, (elsewhere,) = chat(
        bob, ("user", "The survey drone battery died"), external_id="o", project=other_project
    )

    seen = episode_ids(preview(alice, "survey drone", project=project))
    assert mine.pk in seen
    assert teams.pk in seen
    assert strangers.pk not in seen and elsewhere.pk not in seen
    # Without the project named, only their own.
    assert episode_ids(preview(alice, "survey drone")) == [mine.pk]
    # A stranger sees none of it.
    assert strangers.pk in episode_ids(preview(charlie, "survey drone"))
    assert not {mine.pk, teams.pk} & set(episode_ids(preview(charlie, "survey drone")))


def test_as_of_sees_only_the_turns_said_by_then(alice):
    now = timezone.now()
    _c, (old,) = chat(
        alice, ("user", "The kayak trip is booked"), external_id="old", sent_at=now - 30 * DAY
    )
    _c, (new,) = chat(
        alice, ("user", "The kayak trip is cancelled"), external_id="new", sent_at=now - DAY
    )

    assert set(episode_ids(preview(alice, "kayak trip"))) == {old.pk, new.pk}
    assert episode_ids(preview(alice, "kayak trip", as_of=now - 10 * DAY)) == [old.pk]


def test_temporary_conversations_are_never_searched(alice):
    _c, (secret,) = chat(alice, ("user", "The surprise party is at Lola's"), temporary=True)

    assert Message.objects.get(pk=secret.pk).search_document == ""
    assert Message.objects.get(pk=secret.pk).embedding is None
    assert episode_ids(preview(alice, "surprise party Lola")) == []


def test_a_turn_keeps_its_conversations_owner_and_privacy_mode(alice, bob):
    """Searches filter turns by their own copy of these (no join with conversations), so it
    follows the conversation whatever changes."""
    conversation, (turn,) = chat(alice, ("user", "The night train leaves at ten"))

    def copied():
        return Message.objects.values_list("owner_id", "temporary", "vector_bucket").get(pk=turn.pk)

    assert copied() == (alice.pk, False, vector_bucket(alice.pk))
    assert episode_ids(preview(alice, "night train")) == [turn.pk]

    Conversation.objects.filter(pk=conversation.pk).update(owner=bob)
    assert copied() == (bob.pk, False, vector_bucket(bob.pk))
    assert episode_ids(preview(alice, "night train")) == []
    assert episode_ids(preview(bob, "night train")) == [turn.pk]

    Conversation.objects.filter(pk=conversation.pk).update(temporary=True)
    assert copied() == (bob.pk, True, vector_bucket(bob.pk))
    assert episode_ids(preview(bob, "night train")) == []


def test_the_current_conversations_latest_turns_are_left_out(alice):
    current, (turn,) = chat(alice, ("user", "Let us plan the kayak trip"), external_id="now")

    assert episode_ids(preview(alice, "kayak trip", conversation=current)) == []
    assert episode_ids(preview(alice, "kayak trip")) == [turn.pk]


def test_the_api_takes_sources_and_returns_episodes(alice):
    chat(alice, ("user", "Our wedding is at the Lakeside Inn"))
    api = ApiClient(alice)

    body = api.post("/injection-preview", {"message": "wedding lakeside"}).json()
    assert body["episodes"][0]["text"] == "Our wedding is at the Lakeside Inn"
    assert body["episodes"][0]["sent_at"]
    assert body["timing_ms"]["episodes_ms"] > 0
    body = api.post(
        "/injection-preview", {"message": "wedding lakeside", "sources": ["memories"]}
    ).json()
    assert body["episodes"] == []
    assert api.post("/injection-preview", {"message": "x", "sources": ["web"]}).status_code in (
        400,
        422,
    )


def test_embed_memories_embeds_messages_too(alice):
    _c, (turn,) = chat(alice, ("user", "Our wedding is at the Lakeside Inn"))
    Message.objects.update(embedding=None, embedding_model="")

    call_command("embed_memories", verbosity=0)

    assert Message.objects.get(pk=turn.pk).embedding is not None
    assert not Memory.objects.exists()


def test_the_setting_is_on_the_memory_settings_panel_in_both_languages(alice):
    from tests.conftest import client_for

    client = client_for(alice)
    page = client.get("/settings/memories").content.decode()
    assert "Reference past conversations" in page
    client.post(
        "/settings/memories/settings", {"memory_enabled": "on", "next": "/settings/memories"}
    )
    assert MemorySettings.for_user(alice).reference_past_conversations is False
    client.post(
        "/settings/memories/settings",
        {"memory_enabled": "on", "reference_past_conversations": "on"},
    )
    assert MemorySettings.for_user(alice).reference_past_conversations is True
    chinese = client.get("/settings/memories", headers={"Accept-Language": "zh-hans"})
    assert "参考过去的对话" in chinese.content.decode()


@pytest.mark.django_db(transaction=True)
def test_on_side_connections_the_preview_finds_the_same_as_inside_a_transaction(alice):
    """Outside a transaction, past turns and participants' names are searched on side
    connections while the memories are: the answer is the one the caller's own
    connection gives inside a transaction."""
    services.memory_create(owner=alice, content="Mia hiked the Kalalau trail", actor=alice)
    _conversation, (_question, answer, _other) = chat(
        alice,
        ("assistant", "Where did you go hiking?"),
        ("user", "We hiked the Kalalau trail in Kauai"),
        ("user", "The weather was nice"),
    )

    on_side = preview(alice, "Where did Mia hike on Kalalau?", dry_run=True)
    side_connections.finish()
    with transaction.atomic():
        on_caller = preview(alice, "Where did Mia hike on Kalalau?", dry_run=True)

    assert on_side["block"] == on_caller["block"]
    assert answer.pk in episode_ids(on_side)
    assert [m["content"] for m in on_side["memories"]] == ["Mia hiked the Kalalau trail"]


def test_without_a_conversation_no_past_turn_is_searched(alice, project):
    """A user who stored no conversation has no past turn: the preview does not search for
    one (unless the chat names a project, whose conversations may hold some)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    services.memory_create(owner=alice, content="Mia likes green tea", actor=alice)

    def searches(**fields) -> int:
        with CaptureQueriesContext(connection) as captured:
            preview(alice, "green tea", **fields)
        return sum("WITH keyword" in query["sql"] for query in captured)

    assert searches() == 1  # the memories only
    assert searches(project=project) == 2
    chat(alice, ("user", "We hiked the Kalalau trail"))
    assert searches() == 2


def test_each_search_contributes_at_most_episode_depth_turns(alice, vectors_find_meaning):
    """Past turns come from the best EPISODE_DEPTH of each search, whatever the request's
    limit: on the dev file deeper lists let turns both searches rank low outrank the best."""
    from recall.episodes import EPISODE_DEPTH, episode_pool, search_episodes

    chat(alice, *[("user", f"The lighthouse keeper story, part {n}") for n in range(30)])

    ranking = search_episodes(
        episode_pool(alice, project=None, project_ids=[]), "lighthouse keeper"
    ).run()

    keyword_ranks = [m["keyword_rank"] for m in ranking.matches.values() if m["keyword_rank"]]
    vector_ranks = [m["vector_rank"] for m in ranking.matches.values() if m["vector_rank"]]
    assert sorted(keyword_ranks) == list(range(1, EPISODE_DEPTH + 1))
    assert sorted(vector_ranks) == list(range(1, EPISODE_DEPTH + 1))
    assert len(ranking.matches) <= 2 * EPISODE_DEPTH


def test_turns_are_searched_through_the_hnsw_indexes_of_their_owners_buckets(
    alice, bob, project, monkeypatch, vectors_find_meaning
):
    """A turn is in its conversation's owner's vector bucket, and a large pool of turns is
    searched through the HNSW indexes of its buckets only: the user's own for their own
    turns, every one for a project's (its conversations may be anyone's)."""
    from recall import episodes

    _c, (mine,) = chat(alice, ("user", "The survey drone flies on Tuesdays"), external_id="a")
    _c, (teams,) = chat(
        bob, ("user", "The survey drone needs new rotors"), external_id="b", project=project
    )
    mine.refresh_from_db()
    teams.refresh_from_db()
    assert mine.vector_bucket == vector_bucket(alice.pk)
    assert teams.vector_bucket == vector_bucket(bob.pk) != mine.vector_bucket
    # Every pool of turns counts as large.
    monkeypatch.setattr(episodes, "EPISODE_EXACT_VECTOR_LIMIT", 0)
    # Rows of earlier tests, rolled back, stay in an HNSW graph until a vacuum (as in
    # test_retrieval's test of memories' buckets).
    with connection.cursor() as cursor:
        for bucket in ALL_BUCKETS:
            cursor.execute(f"REINDEX INDEX {MESSAGE_HNSW_INDEX_PREFIX}{bucket}")

    def searched(pool):
        search = episodes.search_episodes(pool, "survey drone")
        assert search.ef_search is not None  # HNSW, not exact ranking
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute(f"SET LOCAL hnsw.ef_search = {search.ef_search}")
            cursor.execute(f"EXPLAIN {search.statement[0]}", search.statement[1])
            plan = "\n".join(row[0] for row in cursor.fetchall())
        indexes = set(re.findall(rf"{MESSAGE_HNSW_INDEX_PREFIX}\d+", plan))
        found = {pk for pk, match in search.run().matches.items() if match["vector_rank"]}
        return indexes, found

    own = episodes.episode_pool(alice, project=None, project_ids=[project.pk])
    assert searched(own) == ({f"{MESSAGE_HNSW_INDEX_PREFIX}{vector_bucket(alice.pk)}"}, {mine.pk})
    shared = episodes.episode_pool(alice, project=project, project_ids=[project.pk])
    assert shared.buckets == ALL_BUCKETS
    indexes, found = searched(shared)
    # The planner may sort an index it knows is empty instead of scanning it.
    assert {
        f"{MESSAGE_HNSW_INDEX_PREFIX}{vector_bucket(alice.pk)}",
        f"{MESSAGE_HNSW_INDEX_PREFIX}{vector_bucket(bob.pk)}",
    } <= indexes
    assert found == {mine.pk, teams.pk}
