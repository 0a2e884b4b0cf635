from search import table_statistics as statistics_cache
from search.table_statistics import StatisticsCache


def test_a_figure_is_computed_once_while_fresh_and_again_once_old(monkeypatch):
    cache: StatisticsCache[str, int] = StatisticsCache()
    calls = []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    assert cache.get("memories", compute) == 1
    assert cache.get("memories", compute) == 1
    assert cache.get("messages", compute) == 2

    monkeypatch.setattr(statistics_cache, "SECONDS", 0.0)
    assert cache.get("memories", compute) == 3


def test_a_full_cache_starts_again_empty():
    cache: StatisticsCache[int, int] = StatisticsCache(max_entries=2)
    for key in range(3):
        value = key * 10
        cache.get(key, lambda: value)  # noqa: B023  (called at once, while value is this key's)
    assert list(cache.entries) == [2]
