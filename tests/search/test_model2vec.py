"""The model2vec provider and ``auto``, on a tiny model2vec model each test builds itself.

No network: the model is written to a temporary directory in model2vec's own layout
(tokenizer.json, model.safetensors, config.json) and loaded by model2vec's real code.
"""

from __future__ import annotations

import json
import logging
import math
import socket
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from django.test import Client, override_settings
from safetensors.numpy import save_file
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from memories.jobs import ensure_embeddings
from memories.models import Memory
from recall.injection import PreviewRequest, injection_preview
from search import embeddings
from search.embeddings import (
    FallbackEmbedding,
    LocalHashEmbedding,
    Model2VecEmbedding,
    ModelUnavailable,
    UnavailableEmbedding,
    column_dimensions,
    dimension_conflict,
    embedding_status,
    get_provider,
    load_model2vec,
)
from tests.conftest import make_user
from tests.recall_helpers import remember

TINY_DIMENSIONS = 8
# Words of two topics (drinks, cycling) in English and Chinese; a token's vector is its
# topic's direction plus a little noise, so texts on one topic are close.
TOPICS = {
    "drinks": ["tea", "green", "drink", "drinks", "coffee", "cup", "茶", "绿", "喝", "咖", "啡"],
    "cycling": ["bicycle", "bike", "ride", "rides", "wheel", "red", "自", "行", "车", "骑"],
    "other": ["i", "a", "the", "my", "every", "morning", "我", "的", "每", "天"],
}


def build_tiny_model(path: Path, *, dimensions: int = TINY_DIMENSIONS) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    vocab = {"[UNK]": 0}
    rows = [np.zeros(dimensions)]
    rng = np.random.default_rng(7)
    for axis, words in enumerate(TOPICS.values()):
        direction = np.zeros(dimensions)
        direction[axis] = 1.0
        for word in words:
            vocab[word] = len(vocab)
            rows.append(direction + rng.normal(0, 0.15, dimensions))
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    # Lower-cases, and puts spaces around Chinese characters, as BERT's tokenizers do.
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True, handle_chinese_chars=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.save(str(path / "tokenizer.json"))
    save_file({"embeddings": np.asarray(rows, dtype=np.float32)}, str(path / "model.safetensors"))
    (path / "config.json").write_text(
        json.dumps({"model_type": "model2vec", "normalize": True, "hidden_dim": dimensions})
    )
    return path


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return build_tiny_model(tmp_path / "tiny-model")


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def auto(**overrides: Any) -> Any:
    return override_settings(MEMORY_EMBEDDING_PROVIDER="auto", **overrides)


def test_the_tiny_model_gives_its_dimension_and_puts_similar_texts_closer(tiny):
    provider = Model2VecEmbedding(tiny, name="tiny")
    tea, green_tea, bicycle, chinese_tea, chinese_bike = provider.embed(
        ["I drink tea", "green tea every morning", "a red bicycle", "我每天喝绿茶", "我骑自行车"]
    )

    assert provider.dimensions == TINY_DIMENSIONS and provider.model_name == "model2vec:tiny"
    assert all(len(v) == TINY_DIMENSIONS for v in (tea, green_tea, bicycle))
    assert math.isclose(math.sqrt(sum(v * v for v in tea)), 1.0, rel_tol=1e-5)
    assert cosine(tea, green_tea) > cosine(tea, bicycle)
    assert cosine(chinese_tea, tea) > cosine(chinese_tea, chinese_bike)
    assert cosine(chinese_bike, bicycle) > cosine(chinese_bike, tea)
    assert provider.embed([]) == []


@pytest.mark.django_db
def test_auto_uses_the_model_at_the_model_path(tiny):
    with auto(MEMORY_EMBEDDING_MODEL_PATH=str(tiny)):
        provider = get_provider()
        status = embedding_status()

    assert isinstance(provider, Model2VecEmbedding) and provider.dimensions == TINY_DIMENSIONS
    assert status["provider"] == "auto" and status["in_use"] == "model2vec"
    assert status["fallback_reason"] is None and status["model"] == "model2vec:tiny-model"


def broken_model(tmp_path: Path) -> Path:
    path = tmp_path / "broken"
    path.mkdir()
    (path / "config.json").write_text("{}")
    (path / "model.safetensors").write_bytes(b"not a tensor file")
    (path / "tokenizer.json").write_text("{}")
    return path


@pytest.mark.parametrize("where", ["missing", "broken"])
def test_auto_falls_back_to_the_hash_embeddings_and_says_why(alice, tmp_path, where):
    path = tmp_path / "nowhere" if where == "missing" else broken_model(tmp_path)
    with auto(MEMORY_EMBEDDING_MODEL_PATH=str(path)):
        started = time.monotonic()
        provider = get_provider()
        assert time.monotonic() - started < 1.0
        assert isinstance(provider, FallbackEmbedding) and provider.dimensions == 384
        assert provider.embed(["tea"]) == LocalHashEmbedding(384).embed(["tea"])

        # Anonymous callers (load balancers) see the state; staff see why.
        anonymous = Client().get("/healthz").json()["embeddings"]
        assert anonymous["ok"] is True and "fallback_reason" not in anonymous
        staff = Client()
        staff.force_login(make_user("ops@example.com", is_staff=True))
        health = staff.get("/healthz").json()["embeddings"]
        assert health["ok"] is True
        assert health["provider"] == "auto" and health["in_use"] == "local"
        assert str(path) in health["fallback_reason"]
        reason = "is not a directory" if where == "missing" else "could not be loaded"
        assert reason in health["fallback_reason"]

        kept = remember(alice, "Backups run every night at two")
        preview = injection_preview(alice, PreviewRequest(message="when do backups run?"))
        assert preview["degraded"]["code"] == "EMBEDDING_FALLBACK"
        # A token holder is told the model is not used, never where the server keeps it.
        assert str(path) not in preview["degraded"]["message"]
        assert str(tmp_path) not in json.dumps(preview["degraded"])
        why = "not downloaded yet" if where == "missing" else "could not be loaded"
        assert why in preview["degraded"]["message"]
        # The fallback's hash vectors find no meaning: the preview ranks by keywords alone.
        assert [m["id"] for m in preview["memories"]] == [kept.pk]
        parts = preview["memories"][0]["score_parts"]
        assert (parts["keyword_rank"], parts["vector_rank"]) == (1, None)

        client = Client()
        client.force_login(alice)
        page = client.get("/settings/memories").content.decode()
        assert "the embedding model could not be loaded" in page
        client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/settings/memories"})
        assert "无法加载嵌入模型" in client.get("/settings/memories").content.decode()


@pytest.mark.django_db
def test_no_notice_and_no_degraded_without_a_fallback(alice, tiny):
    remember(alice, "Backups run every night at two")
    client = Client()
    client.force_login(alice)
    assert "could not be loaded" not in client.get("/settings/memories").content.decode()
    assert injection_preview(alice, PreviewRequest(message="backups"))["degraded"] is None


@pytest.mark.django_db
def test_model2vec_chosen_explicitly_fails_loudly_instead(tmp_path):
    with override_settings(
        MEMORY_EMBEDDING_PROVIDER="model2vec", MEMORY_EMBEDDING_MODEL_PATH=str(tmp_path / "x")
    ):
        provider = get_provider()
        status = embedding_status()
    assert isinstance(provider, UnavailableEmbedding)
    assert status["ok"] is False and status["code"] == "EMBEDDING_UNAVAILABLE"
    assert status["in_use"] == "none"


def test_without_a_model_nothing_is_downloaded_offline_or_unreachable(tmp_path, monkeypatch):
    import huggingface_hub

    def no_download(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("no download may be attempted")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", no_download)
    with auto(MEMORY_EMBEDDING_CACHE_DIR=str(tmp_path)):
        # Not asked to download (a request, a worker job): only the cache is looked at.
        with pytest.raises(ModelUnavailable, match="not downloaded"):
            load_model2vec()
        # HF_HUB_OFFLINE (set for the tests): given up before any connection.
        monkeypatch.setattr(socket, "create_connection", no_download)
        with pytest.raises(ModelUnavailable, match="HF_HUB_OFFLINE"):
            load_model2vec(download=True)
        # No network: a quick connection attempt fails and the hub client is not called.
        monkeypatch.delenv("HF_HUB_OFFLINE")

        def unreachable(*args: Any, **kwargs: Any) -> None:
            raise socket.gaierror(-2, "Name or service not known")

        monkeypatch.setattr(socket, "create_connection", unreachable)
        with pytest.raises(ModelUnavailable, match="unreachable"):
            load_model2vec(download=True)
    assert list(tmp_path.iterdir()) == []


def test_the_model_is_downloaded_once_into_the_cache(tmp_path, monkeypatch):
    import huggingface_hub

    downloads: list[str] = []

    def fake_download(repo: str, *, local_dir: Path, **kwargs: Any) -> str:
        downloads.append(repo)
        build_tiny_model(Path(local_dir))
        return str(local_dir)

    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_download)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: socket.socket())
    with auto(MEMORY_EMBEDDING_CACHE_DIR=str(tmp_path / "models")):
        first = load_model2vec(download=True)
        second = load_model2vec(download=True)

    assert downloads == ["minishlab/potion-multilingual-128M"]
    assert first.model_name == second.model_name == "model2vec:minishlab/potion-multilingual-128M"
    assert second.path == tmp_path / "models" / "minishlab--potion-multilingual-128M"
    assert [p.name for p in (tmp_path / "models").iterdir()] == [second.path.name]


def test_switching_to_the_model_reembeds_a_small_table_after_migrate(alice, tiny):
    kept = remember(alice, "I drink green tea every morning")
    assert kept.embedding_model == "local-hash-v1-384"
    with auto(MEMORY_EMBEDDING_MODEL_PATH=str(tiny)):
        # Before: the column holds 384 dimensions, the model gives 8; keyword-only recall.
        assert dimension_conflict() is not None
        preview = injection_preview(alice, PreviewRequest(message="tea"))
        assert preview["degraded"]["code"] == "EMBEDDING_DIMENSION_CONFLICT"

        ensure_embeddings()  # what migrate runs after its migrations

        assert column_dimensions() == TINY_DIMENSIONS
        kept.refresh_from_db()
        assert kept.embedding_model == "model2vec:tiny-model"
        assert kept.embedding is not None and len(kept.embedding) == TINY_DIMENSIONS
        healthy = injection_preview(alice, PreviewRequest(message="a cup of tea"))
        assert healthy["degraded"] is None
        assert healthy["memories"][0]["score_parts"]["vector_rank"] == 1

        # Chosen by hand too: back to 384 with the hash embeddings, and the model again.
        with override_settings(MEMORY_EMBEDDING_PROVIDER="local"):
            call_command("embed_memories", rebuild=True, verbosity=0)
            assert column_dimensions() == 384
        call_command("embed_memories", rebuild=True, verbosity=0)
        assert column_dimensions() == TINY_DIMENSIONS


def test_a_large_table_is_left_to_the_rebuild_command(alice, tiny, caplog):
    remember(alice, "I drink green tea every morning")
    with (
        auto(MEMORY_EMBEDDING_MODEL_PATH=str(tiny), MEMORY_EMBEDDING_AUTO_REBUILD_MAX=0),
        caplog.at_level(logging.WARNING, logger="memories.jobs"),
    ):
        ensure_embeddings()
        assert column_dimensions() == 384
        assert "embed_memories --rebuild" in caplog.text
        assert Memory.objects.get().embedding_model == "local-hash-v1-384"


@pytest.mark.django_db
def test_a_missing_model_is_looked_for_again(tmp_path, monkeypatch, tiny):
    path = tmp_path / "later"
    with auto(MEMORY_EMBEDDING_MODEL_PATH=str(path)):
        fallback = get_provider()
        assert isinstance(fallback, FallbackEmbedding)
        assert get_provider() is fallback  # made once
        tiny.rename(path)
        monkeypatch.setattr(embeddings, "_RECHECK_SECONDS", 0.0)
        assert isinstance(get_provider(), Model2VecEmbedding)
