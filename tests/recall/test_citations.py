"""Show memory references in replies (MemorySettings.show_citations): the block numbers its
memories and asks the model to cite them; the preview maps each number to the memory."""

from __future__ import annotations

import json

import pytest

from accounts.models import MemorySettings
from recall.block import CITE_LINE
from tests.recall_helpers import ApiClient, remember

pytestmark = pytest.mark.django_db


def preview(alice, fmt: str) -> dict:
    return ApiClient(alice).post("/injection-preview", {"message": "tabs?", "format": fmt}).json()


@pytest.fixture
def two_memories(alice):
    first = remember(alice, "Prefers tabs over spaces", kind="preference")
    second = remember(alice, "Indents Go code with tabs", kind="fact")
    return first, second


def test_off_by_default_neither_numbers_nor_references(alice, two_memories):
    assert not MemorySettings.for_user(alice).show_citations
    for fmt in ("markdown", "xml", "json"):
        result = preview(alice, fmt)
        assert result["memories"], fmt
        assert "[1]" not in result["block"] and CITE_LINE not in result["block"]
        assert result["references"] == []
        if fmt == "json":
            assert "cite" not in json.loads(result["block"])


@pytest.mark.parametrize("fmt", ["markdown", "xml", "json"])
def test_on_numbers_each_memory_and_maps_the_numbers(alice, two_memories, fmt):
    MemorySettings.objects.filter(user=alice).update(show_citations=True)
    result = preview(alice, fmt)
    block = result["block"]
    ids = [memory["id"] for memory in result["memories"]]
    assert len(ids) == 2
    assert result["references"] == [
        {
            "n": n,
            "id": memory["id"],
            "kind": memory["kind"],
            "url": f"/settings/memories?memory={memory['id']}",
        }
        for n, memory in enumerate(result["memories"], start=1)
    ]
    first, second = (memory["content"] for memory in result["memories"])
    if fmt == "markdown":
        assert block.startswith(f"## Memory\n{CITE_LINE}\n")
        assert f"- [1] {first}\n" in block and f"- [2] {second}\n" in block
    elif fmt == "xml":
        assert block.startswith(f"<cite>{CITE_LINE}</cite>\n")
        assert "- [1] [" in block and "- [2] [" in block
    else:
        document = json.loads(block)
        assert document["cite"] == CITE_LINE
        assert [item["n"] for item in document["user"]] == [1, 2]
        assert [item["content"] for item in document["user"]] == [first, second]


def test_on_with_nothing_recalled_adds_nothing(alice):
    MemorySettings.objects.filter(user=alice).update(show_citations=True)
    result = preview(alice, "markdown")
    assert result["block"] == "" and result["references"] == []
