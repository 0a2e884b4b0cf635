"""Embedding providers: a batch of texts in, one unit vector per text out.

``local`` (the default) needs no model and no network: it hashes word,
CJK character and character-trigram features into a fixed number of
dimensions and normalises the result, so texts that share words or Chinese
characters are close. It is deterministic across processes and machines.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memoryapp.textsearch import terms


class EmbeddingProvider(Protocol):
    model_name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


_LATIN_WORD = re.compile(r"^[^\W\d_]+$")
_ENGLISH_SUFFIXES = ("ing", "ed", "es", "s", "ly")


def _stem(word: str) -> str:
    for suffix in _ENGLISH_SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _features(text: str) -> list[tuple[str, float]]:
    features: list[tuple[str, float]] = []
    for term in terms(text):
        if _LATIN_WORD.match(term) and term.isascii():
            stem = _stem(term)
            features.append(("w:" + stem, 1.0))
            padded = f"<{stem}>"
            features.extend(("t:" + padded[i : i + 3], 0.35) for i in range(len(padded) - 2))
        else:
            # CJK bigrams (and digits, other scripts) as they come, plus their characters.
            features.append(("w:" + term, 1.0))
            if len(term) == 2 and not term.isascii():
                features.extend(("c:" + char, 0.5) for char in term)
    return features


class LocalHashEmbedding:
    def __init__(self, dimensions: int):
        self.dimensions = dimensions
        self.model_name = f"local-hash-v1-{dimensions}"

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for feature, weight in _features(text):
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self.dimensions
            sign = 1.0 if digest[4] & 1 else -1.0
            vector[index] += sign * weight
        norm = math.sqrt(sum(value * value for value in vector))
        return [value / norm for value in vector] if norm else vector

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]


@lru_cache(maxsize=1)
def get_provider() -> EmbeddingProvider:
    """The provider the settings choose (MEMORY_EMBEDDING_PROVIDER)."""
    name = settings.MEMORY_EMBEDDING_PROVIDER
    if name == "local":
        return LocalHashEmbedding(settings.MEMORY_EMBEDDING_DIMENSIONS)
    raise ImproperlyConfigured(f"Unknown MEMORY_EMBEDDING_PROVIDER {name!r}; use 'local'.")
