"""The embedder interface and the local all-MiniLM-L6-v2 (int8 ONNX) adapter."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from agentbank.providers.model_packages import minilm_model_path, minilm_tokenizer_path

LOCAL_MODEL_NAME = "all-MiniLM-L6-v2-int8"
# The tokenizer file ships with a 128-token limit; the model was trained to 256, so chunks of
# about 180 words are embedded whole.
MAX_TOKENS = 256


@runtime_checkable
class Embedder(Protocol):
    """Texts to L2-normalized vectors of ``dimension`` floats."""

    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def close(self) -> None: ...

    # Embedders key per-process caches (the experts' vectors), by identity.
    def __hash__(self) -> int: ...


class LocalMiniLMEmbedder:
    """all-MiniLM-L6-v2 through onnxruntime: mean pooling over tokens, then unit length."""

    dimension = 384
    name = LOCAL_MODEL_NAME

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        *,
        batch_size: int = 16,
        threads: int | None = None,
    ) -> None:
        import onnxruntime
        import tokenizers

        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self._session = onnxruntime.InferenceSession(
            str(model_path or minilm_model_path()), options, providers=["CPUExecutionProvider"]
        )
        self._input_names = {i.name for i in self._session.get_inputs()}
        self._tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path or minilm_tokenizer_path()))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - pad to the longest in a batch
        self._batch_size = batch_size
        # One batch at a time per process: the model already uses every core it is given, and runs side by
        # side (several agents built at once) each held working memory of their own: two build processes
        # peaked at 3.7 and 4.8 GB, and at 1.4 GB each one batch at a time (benchmarks/results/
        # builds-in-flight-300-histories-2-builders-local-embedder[-one-batch-at-a-time]-2026-11-28.json).
        self._one_at_a_time = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts``, one row each, L2-normalized."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), self._batch_size):
            batch = list(texts[start : start + self._batch_size])
            out[start : start + len(batch)] = self._embed_batch(batch)
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self._one_at_a_time:
            (hidden,) = self._session.run(["last_hidden_state"], feeds)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def close(self) -> None:
        self._session = None
