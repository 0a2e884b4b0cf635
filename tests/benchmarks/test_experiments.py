"""The benchmarks' experiment machinery: constants overridden by dotted path, grids and the
leave-one-conversation-out choice. A wrong choice here would make a tuning look honest."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import ModuleType

import pytest
from experiments import (
    Override,
    OverrideError,
    Variant,
    applied,
    grid_variants,
    leave_one_out,
    parse_grid,
    parse_override,
    parse_values,
    pooled_mean,
    resolve,
)


@pytest.fixture
def modules() -> Iterator[tuple[ModuleType, ModuleType]]:
    """A package-level module defining constants, and one that imported two of them."""
    defining = ModuleType("bench_fake.ranking")
    defining.DEPTH = 10
    defining.WEIGHT = 0.5
    defining.WEIGHTS = {"recency": 0.1, "use": 0.05}
    defining.lower_case = 1
    importer = ModuleType("bench_fake.episodes")
    importer.WEIGHT = defining.WEIGHT  # from ranking import WEIGHT
    importer.WEIGHTS = defining.WEIGHTS
    package = ModuleType("bench_fake")
    package.__path__ = []
    added = {"bench_fake": package, defining.__name__: defining, importer.__name__: importer}
    sys.modules.update(added)
    yield defining, importer
    for name in added:
        sys.modules.pop(name, None)


def test_values_are_python_literals_and_tuples_keep_their_commas():
    assert parse_values("0.25,0.5,1") == [0.25, 0.5, 1]
    assert parse_values("(1, 2),(3,4)") == [(1, 2), (3, 4)]
    assert parse_values("'a','b'") == ["a", "b"]
    assert parse_values("fast,slow") == ["fast", "slow"]  # Bare words: taken as text.
    assert parse_values("True") == [True]


def test_an_override_is_set_in_the_module_and_its_importers_then_restored(modules):
    defining, importer = modules
    override = parse_override("bench_fake.ranking.WEIGHT=0.8")
    assert override.label == "WEIGHT=0.8"

    with applied([override]) as where:
        assert defining.WEIGHT == importer.WEIGHT == 0.8
        assert where == ["WEIGHT=0.8 in bench_fake.ranking, bench_fake.episodes"]
    assert defining.WEIGHT == importer.WEIGHT == 0.5


def test_a_dict_entry_is_changed_in_place_and_restored_after_an_error(modules):
    defining, importer = modules
    with (
        pytest.raises(RuntimeError),
        applied([parse_override("bench_fake.ranking.WEIGHTS[recency]=0.3")]),
    ):
        assert importer.WEIGHTS["recency"] == 0.3
        raise RuntimeError("the evaluation failed")
    assert defining.WEIGHTS == {"recency": 0.1, "use": 0.05}


def test_paths_that_name_nothing_say_what_there_is(modules):
    with pytest.raises(OverrideError, match="has no DEPT; its constants: DEPTH, WEIGHT, WEIGHTS"):
        resolve("bench_fake.ranking.DEPT")
    with pytest.raises(OverrideError, match="no such entry"):
        resolve("bench_fake.ranking.WEIGHTS[recent]")
    with pytest.raises(OverrideError, match="no importable module"):
        resolve("no_such_package.NAME")
    with pytest.raises(OverrideError, match="PATH=VALUE"):
        parse_override("bench_fake.ranking.DEPTH")


def test_a_real_constant_is_found_by_its_dotted_path():
    target = resolve("recall.episodes.EPISODE_DEPTH")
    assert target.name == "EPISODE_DEPTH" and isinstance(target.current(), int)


def test_grids_give_every_combination_in_order(modules):
    variants = grid_variants(
        [
            parse_grid("bench_fake.ranking.DEPTH=5,20"),
            parse_grid("bench_fake.ranking.WEIGHT=0.4,0.6"),
        ]
    )
    assert [v.label for v in variants] == [
        "DEPTH=5, WEIGHT=0.4",
        "DEPTH=5, WEIGHT=0.6",
        "DEPTH=20, WEIGHT=0.4",
        "DEPTH=20, WEIGHT=0.6",
    ]
    assert Variant().label == "(as is)"
    with applied(variants[2].overrides):
        assert sys.modules["bench_fake.ranking"].DEPTH == 20


def test_each_conversation_is_scored_with_the_variant_best_on_the_others():
    # Variant 0 is great on "a" only; variant 1 is better everywhere else.
    scores = [
        {"a": [1.0, 1.0], "b": [0.2], "c": [0.2]},
        {"a": [0.5, 0.5], "b": [0.6], "c": [0.6]},
    ]
    folds = leave_one_out(scores)
    assert [(f.held_out, f.chosen) for f in folds] == [("a", 1), ("b", 0), ("c", 0)]
    # On "b" held out: variant 0 pools a and c's three questions: (1 + 1 + 0.2) / 3.
    assert folds[1].training_score == pytest.approx(2.2 / 3)
    assert pooled_mean(scores[1], ["b", "c"]) == pytest.approx(0.6)


def test_a_tie_goes_to_the_first_variant():
    folds = leave_one_out([{"a": [0.5], "b": [0.5]}, {"a": [0.5], "b": [0.5]}])
    assert [f.chosen for f in folds] == [0, 0]


def test_an_override_of_a_class_attribute(modules):
    class Settings:
        LIMIT = 3

    sys.modules["bench_fake.ranking"].Settings = Settings
    override = parse_override("bench_fake.ranking.Settings.LIMIT=7")
    assert isinstance(override, Override)
    with applied([override]):
        assert Settings.LIMIT == 7
    assert Settings.LIMIT == 3
