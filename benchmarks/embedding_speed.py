"""Query embedding speed: median and p95 of one short query at a time, 1,000 queries.

    python benchmarks/embedding_speed.py [--queries 1000]

Measures ``provider.embed([query])`` (what recall does per request) for:
- the tiny model2vec model the tests build (8 dimensions, ~30 tokens);
- a synthetic model2vec model of realistic shape (100,000 tokens × 256 dimensions,
  a BERT-style tokenizer) standing in for potion-multilingual-128M;
- the real model2vec model, when one is available locally (MEMORY_EMBEDDING_MODEL_PATH
  or already downloaded into MEMORY_EMBEDDING_CACHE_DIR); nothing is downloaded;
- the local hash embeddings, for comparison.
Needs no database. The target is 10 ms p95 on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import django

django.setup()

import numpy as np  # noqa: E402
from safetensors.numpy import save_file  # noqa: E402
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers  # noqa: E402

from search.embeddings import (  # noqa: E402
    LocalHashEmbedding,
    Model2VecEmbedding,
    ModelUnavailable,
    load_model2vec,
    model2vec_source,
)
from tests.search.test_model2vec import build_tiny_model  # noqa: E402

ENGLISH = [
    "what did I say about backups",
    "which editor do I use",
    "when is the team stand-up",
    "my favourite tea",
    "deploy steps for the billing service",
    "who reviews the frontend changes",
    "vacation plans in August",
    "database migration rules",
]
CHINESE = [
    "我喜欢喝什么茶",
    "每周例会在什么时候",
    "项目的部署流程",
    "我用哪个编辑器",
    "八月的假期安排",
    "代码审查由谁负责",
]


def queries(count: int) -> list[str]:
    pool = ENGLISH + CHINESE
    return [f"{pool[i % len(pool)]} {i}" if i % 3 else pool[i % len(pool)] for i in range(count)]


def build_realistic_model(path: Path, tokens: int = 100_000, dimensions: int = 256) -> Path:
    """A WordPiece model of the real one's width and a large vocabulary (random vectors)."""
    path.mkdir(parents=True, exist_ok=True)
    words = {w for q in ENGLISH for w in q.split()} | {c for q in CHINESE for c in q}
    vocab = {"[UNK]": 0}
    for word in sorted(words):
        vocab[word] = len(vocab)
    rng = np.random.default_rng(1)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    while len(vocab) < tokens:
        piece = "".join(rng.choice(letters, rng.integers(2, 8)))
        vocab.setdefault(piece if rng.random() < 0.5 else "##" + piece, len(vocab))
    tokenizer = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True, handle_chinese_chars=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.save(str(path / "tokenizer.json"))
    vectors = rng.normal(size=(len(vocab), dimensions)).astype(np.float32)
    save_file({"embeddings": vectors}, str(path / "model.safetensors"))
    (path / "config.json").write_text('{"model_type": "model2vec", "normalize": true}')
    return path


def measure(embed: Callable[[list[str]], object], texts: list[str]) -> tuple[float, float]:
    for text in texts[:20]:
        embed([text])  # warm up
    times = []
    for text in texts:
        started = time.perf_counter()
        embed([text])
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000)
    args = parser.parse_args()
    texts = queries(args.queries)
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        tiny = Model2VecEmbedding(build_tiny_model(Path(tmp) / "tiny"), name="tiny")
        rows.append(("model2vec tiny (8 dims)", *measure(tiny.embed, texts)))
        realistic = Model2VecEmbedding(build_realistic_model(Path(tmp) / "big"), name="synthetic")
        rows.append(("model2vec synthetic (100k × 256)", *measure(realistic.embed, texts)))
    try:
        real = load_model2vec()
    except ModelUnavailable as exc:
        print(f"No real model2vec model available locally ({model2vec_source()[1]}): {exc}")
    else:
        rows.append((f"{real.model_name} ({real.dimensions} dims)", *measure(real.embed, texts)))
    rows.append(("local hash (384 dims)", *measure(LocalHashEmbedding(384).embed, texts)))
    print(f"{len(texts)} queries, one at a time; os.cpu_count()={os.cpu_count()}")
    print(f"{'provider':<48} {'median ms':>10} {'p95 ms':>8}")
    for name, median, p95 in rows:
        print(f"{name:<48} {median:>10.3f} {p95:>8.3f}")


if __name__ == "__main__":
    main()
