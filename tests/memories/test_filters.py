"""memories.filters.MemoryFilters: one filters object for the pages, the API and recall."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from django.http import QueryDict

from api.memories import ListFilters, SearchParams, filters_from
from memories.filters import MemoryFilters
from memories.permissions import memories_visible_to
from memories.services import memory_create


def api_filters(schema: Any, **params: Any) -> MemoryFilters:
    """What an API endpoint makes of a query: the schema validates, ``filters_from`` converts."""
    return filters_from(SimpleNamespace(user=None), schema(**params))  # type: ignore[arg-type]


def test_a_page_query_and_an_api_query_give_the_same_filters() -> None:
    page = MemoryFilters.from_query(
        QueryDict(
            "q=green%20tea&kind=fact&tag=%23Drinks&created_after=2026-01-01T00:00:00Z"
            "&created_before=2026-06-01T12:30:00%2B00:00"
        )
    )
    search = api_filters(
        SearchParams,
        q="green tea",
        kind="fact",
        tag="#Drinks",
        created_after="2026-01-01T00:00:00Z",
        created_before="2026-06-01T12:30:00+00:00",
    )
    expected = MemoryFilters(
        q="green tea",
        kinds=("fact",),
        tags=("drinks",),
        created_after=datetime(2026, 1, 1, tzinfo=UTC),
        created_before=datetime(2026, 6, 1, 12, 30, tzinfo=UTC),
    )
    assert page == search == expected

    listed = api_filters(ListFilters, state="trash", kind="knowledge", tag="drinks")
    assert listed == MemoryFilters.from_query(QueryDict("state=trash&kind=fact&tag=drinks"))


def test_the_page_query_string_round_trips_tags_and_dates() -> None:
    filters = MemoryFilters(
        q="tea",
        tags=("drinks", "suppliers"),
        created_after=datetime(2026, 1, 1, tzinfo=UTC),
        state="forgotten",
    )
    assert MemoryFilters.from_query(QueryDict(filters.querystring())) == filters
    assert MemoryFilters.from_query(QueryDict("created_after=yesterday")).created_after is None


@pytest.mark.django_db
def test_the_same_filters_select_the_same_memories_for_page_and_api(alice: Any) -> None:
    tea = memory_create(owner=alice, content="Green tea", kind="fact", tags=["drinks"])
    memory_create(owner=alice, content="Black coffee", kind="fact", tags=["coffee"])
    memory_create(owner=alice, content="Tea ritual", kind="preference", tags=["drinks"])
    page = MemoryFilters.from_query(QueryDict("kind=fact&tag=drinks"))
    api = api_filters(ListFilters, kind="fact", tag="drinks")
    everything = memories_visible_to(alice)
    assert list(page.narrow(page.in_state(everything))) == [tea]
    assert list(api.narrow(api.in_state(everything))) == [tea]
