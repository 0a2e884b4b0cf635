"""Ranking experiments for the benchmarks: constants overridden by dotted path, and the
leave-one-group-out choice among variants.

An override names a module-level constant by its dotted path and gives it a value:
``search.ranking.PERSON_BOOST=0.5``, or one entry of a dict constant:
``search.ranking.WEIGHTS[recency]=0.2``. The path is resolved as written (the longest
importable module, then attributes), so it follows a constant wherever it moves. While
applied, the new value is set in the defining module and in every loaded module that
imported the very same object under the same name (``from x import NAME`` made a copy of
the binding); a dict entry is changed in place, which every importer sees. Only values
read at call time change: a default argument, or SQL built from the constant when its
module was imported, keeps the old value.

A grid (``PATH=v1,v2,v3``; several grids: every combination) gives variants; each group
(a conversation) is then scored with the variant that is best on all the other groups
(``leave_one_out``), so a constant is never chosen on the data it is judged on.
"""

from __future__ import annotations

import ast
import functools
import importlib
import itertools
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

_MISSING = object()


class OverrideError(ValueError):
    """An override that names nothing, or cannot be parsed."""


def parse_value(text: str) -> Any:
    """A Python literal (``0.5``, ``(1, 2)``, ``'text'``, ``True``), else the text itself."""
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text.strip()


def parse_values(text: str) -> list[Any]:
    """``0.25,0.5,1`` → [0.25, 0.5, 1]; literals with commas inside (``(1,2),(3,4)``) too."""
    try:
        values = ast.literal_eval(f"[{text}]")
    except (ValueError, SyntaxError):
        values = [parse_value(part) for part in text.split(",")]
    if not values:
        raise OverrideError(f"no value in {text!r}")
    return list(values)


@dataclass(frozen=True)
class Target:
    """Where a constant lives: ``owner.name`` (``owner[key]`` of it with a key)."""

    path: str
    owner: Any
    name: str
    key: Any = None

    @property
    def has_key(self) -> bool:
        return self.key is not None

    def current(self) -> Any:
        value = getattr(self.owner, self.name)
        return value[self.key] if self.has_key else value


def resolve(path: str) -> Target:
    """``package.module.NAME`` or ``package.module.NAME[key]`` → its Target."""
    key = None
    if path.endswith("]") and "[" in path:
        path, raw_key = path[:-1].split("[", 1)
        key = parse_value(raw_key)
    parts = path.split(".")
    if len(parts) < 2:
        raise OverrideError(f"{path}: give module.NAME, e.g. recall.episodes.EPISODE_DEPTH")
    for split in range(len(parts) - 1, 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:-1]:
            owner = getattr(owner, attribute, _MISSING)
            if owner is _MISSING:
                raise OverrideError(f"{path}: no {attribute} in {'.'.join(parts[:split])}")
        name = parts[-1]
        if not hasattr(owner, name):
            known = (
                sorted(n for n in vars(owner) if n.isupper()) if hasattr(owner, "__dict__") else []
            )
            raise OverrideError(
                f"{path}: {'.'.join(parts[:-1])} has no {name}"
                + (f"; its constants: {', '.join(known)}" if known else "")
            )
        target = Target(".".join(parts), owner, name, key)
        if key is not None:
            container = getattr(owner, name)
            if not isinstance(container, Mapping) or key not in container:
                raise OverrideError(f"{path}[{key!r}]: no such entry")
        return target
    raise OverrideError(f"{path}: no importable module in it")


@dataclass(frozen=True)
class Override:
    target: Target
    value: Any

    @property
    def label(self) -> str:
        name = self.target.name + (f"[{self.target.key}]" if self.target.has_key else "")
        return f"{name}={self.value!r}"


def parse_override(text: str) -> Override:
    """``PATH=value``."""
    path, value = _split(text)
    return Override(resolve(path), parse_value(value))


def parse_grid(text: str) -> list[Override]:
    """``PATH=v1,v2,v3`` → one override per value."""
    path, values = _split(text)
    target = resolve(path)
    return [Override(target, value) for value in parse_values(values)]


def _split(text: str) -> tuple[str, str]:
    path, equals, value = text.partition("=")
    if not equals or not path.strip() or not value.strip():
        raise OverrideError(f"{text!r}: write PATH=VALUE, e.g. recall.episodes.EPISODE_DEPTH=20")
    return path.strip(), value


def importers(module: ModuleType, name: str) -> list[ModuleType]:
    """``module`` and every loaded module that binds the same object to ``name``."""
    value = getattr(module, name)
    return [
        loaded
        for loaded in list(sys.modules.values())
        if isinstance(loaded, ModuleType) and _binding(loaded, name) is value
    ]


def _binding(module: ModuleType, name: str) -> Any:
    # What the module's namespace holds: a module-level __getattr__ (lazy or deprecated
    # names) is not asked.
    return vars(module).get(name, _MISSING)


@contextmanager
def applied(overrides: Sequence[Override]) -> Iterator[list[str]]:
    """The overrides set for the block, restored after it; yields where each was set."""
    undo: list[Callable[[], None]] = []
    where: list[str] = []
    try:
        for override in overrides:
            target = override.target
            if target.has_key:
                container = getattr(target.owner, target.name)
                old = container[target.key]
                container[target.key] = override.value
                undo.append(functools.partial(container.__setitem__, target.key, old))
                where.append(f"{override.label} (in place)")
                continue
            owners = (
                importers(target.owner, target.name)
                if isinstance(target.owner, ModuleType)
                else [target.owner]
            )
            for owner in owners:
                old = getattr(owner, target.name)
                setattr(owner, target.name, override.value)
                undo.append(functools.partial(setattr, owner, target.name, old))
            names = ", ".join(getattr(owner, "__name__", repr(owner)) for owner in owners)
            where.append(f"{override.label} in {names}")
        yield where
    finally:
        for restore in reversed(undo):
            restore()


@dataclass(frozen=True)
class Variant:
    """One combination of a grid's values (no override: things as they are)."""

    overrides: tuple[Override, ...] = ()

    @property
    def label(self) -> str:
        return ", ".join(override.label for override in self.overrides) or "(as is)"


def grid_variants(grids: Sequence[Sequence[Override]]) -> list[Variant]:
    """Every combination of the grids' values, in the order given."""
    return [Variant(tuple(combination)) for combination in itertools.product(*grids)]


@dataclass(frozen=True)
class Fold:
    held_out: str
    chosen: int  # index of the variant best on the other groups
    training_score: float


def pooled_mean(values: Mapping[str, Sequence[float]], groups: Sequence[str]) -> float:
    """The mean over every item of ``groups`` (each question counts once)."""
    items = [value for group in groups for value in values.get(group, ())]
    return sum(items) / len(items) if items else 0.0


def leave_one_out(scores: Sequence[Mapping[str, Sequence[float]]]) -> list[Fold]:
    """``scores[v][group]``: variant v's per-item figures in each group. For each group, the
    variant with the best pooled mean over all the other groups (the first on a tie)."""
    groups = list(dict.fromkeys(group for variant in scores for group in variant))
    folds = []
    for held_out in groups:
        others = [group for group in groups if group != held_out]
        training = [pooled_mean(variant, others) for variant in scores]
        best = max(range(len(scores)), key=lambda index: (training[index], -index))
        folds.append(Fold(held_out, best, training[best]))
    return folds
