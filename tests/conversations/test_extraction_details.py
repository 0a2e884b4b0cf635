"""Reconciliation keeps a statement whose details differ from a memory's: a number, a day, a
time or the thing itself. Merged as evidence, "I drink mango tea on Monday" was lost beside
"I eat mango snacks at 8 o'clock". Paraphrases with the same details still merge."""

from __future__ import annotations

from typing import Any

import pytest

from conversations.extraction import Candidate
from conversations.extraction.details import differ
from conversations.extraction.reconcile import Reconciler
from conversations.extraction.runs import run_batch
from memories.models import Memory
from memories.services import memory_create
from tests.extraction_helpers import conversation_with

pytestmark = pytest.mark.django_db

DIFFERENT = [
    ("I eat mango snacks at 8 o'clock", "I drink mango tea on Monday"),
    ("Runs 5 km along the river every morning", "Runs 10 km along the river every morning"),
    ("Has piano lessons with Anna every Tuesday", "Has piano lessons with Anna every Thursday"),
    ("The team standup is at 9 am in room B", "The team standup is at 9 pm in room B"),
    ("Keeps two cats at home in Lyon", "Keeps three cats at home in Lyon"),
    (
        "Drinks mango tea every morning at the office",
        "Drinks mango juice every morning at the office",
    ),
    ("我每周一在办公室喝芒果茶", "我每周三在办公室喝芒果茶"),
    ("我每天沿着河边跑5公里", "我每天沿着河边跑10公里"),
    ("我每天早上八点在办公室喝咖啡", "我每天早上九点在办公室喝咖啡"),
    ("我每天早上在办公室喝芒果茶", "我每天早上在办公室喝芒果汁"),
    ("我明天坐高铁去北京出差", "我后天坐高铁去北京出差"),
]
SAME = [
    ("Drinks mango tea every Monday at the office", "Drinks mango tea every Monday in the office"),
    ("Runs 5 km along the river every morning", "Runs 5 km along the river each morning"),
    (
        "Has piano lessons with Anna every Tuesday evening",
        "Has piano lessons with Anna each Tuesday evening",
    ),
    ("The team standup is at 9 am in room B", "Team standup is at 9 am in room B"),
    ("我每周一在办公室喝芒果茶", "我每周一都在办公室喝芒果茶"),
    ("我每天沿着河边跑5公里", "我每天都沿着河边跑5公里"),
    ("需要安装 GDAL 才能导入 shapefile", "需要先安装 GDAL 才能导入 shapefile"),
]


def _reconcile(alice: Any, content: str) -> Any:
    conversation = conversation_with(alice, ("user", content))
    message = conversation.messages.get()
    reconciler = Reconciler(conversation=conversation, run_id=1, batch=run_batch(1), review=False)
    return reconciler.reconcile(
        [Candidate(kind="fact", content=content, message_ids=[message.pk], quote=content)]
    )


@pytest.mark.parametrize(("existing", "candidate"), DIFFERENT)
def test_a_statement_with_other_details_is_its_own_memory(
    alice: Any, existing: str, candidate: str
) -> None:
    memory_create(owner=alice, content=existing, kind="fact")
    tally = _reconcile(alice, candidate)
    assert (tally.created, tally.merged) == (1, 0)
    assert set(Memory.objects.values_list("content", flat=True)) == {existing, candidate}


@pytest.mark.parametrize(("existing", "candidate"), SAME)
def test_a_paraphrase_with_the_same_details_still_merges(
    alice: Any, existing: str, candidate: str
) -> None:
    memory_create(owner=alice, content=existing, kind="fact")
    tally = _reconcile(alice, candidate)
    assert (tally.created, tally.merged) == (0, 1)


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_details_differ(a: str, b: str) -> None:
    assert differ(a, b) and differ(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        *SAME,
        ("I am a teacher in Lyon", "Is a teacher in Lyon"),
        ("Loves the sun in Nice", "Really loves the sun in Nice"),
        ("Jan prefers pytest", "Jan prefers pytest for testing"),
        ("我们一起用 Django 开发", "我们一直一起用 Django 开发"),
    ],
)
def test_details_agree(a: str, b: str) -> None:
    assert not differ(a, b) and not differ(b, a)
