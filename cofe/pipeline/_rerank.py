"""Rerankers of the candidate pool: MiniLM re-scoring, a local cross-encoder, or an LLM."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import numpy as np

from cofe._cache import Cache
from cofe.llm import Endpoint
from cofe.pipeline._embed import Embedder, shared_embedder
from cofe.runlog import Chunk


class MiniLMReranker:
    """Re-scores the pool by MiniLM cosine similarity (a bi-encoder; no cross-encoder ships offline)."""

    name = "minilm"

    def __init__(self, top_k: int, embedder: Embedder | None = None) -> None:
        self.top_k = top_k
        self.embedder = embedder or shared_embedder()
        self._vectors: dict[str, np.ndarray] = {}

    def prepare(self, chunks: list[Chunk], cache: Cache | None) -> None:
        matrix = self.embedder.encode_cached([c.text for c in chunks], cache)
        self._vectors = {c.chunk_id: matrix[i] for i, c in enumerate(chunks)}

    def __call__(self, query: str, candidates: list[Chunk]) -> list[tuple[Chunk, float]]:
        if not candidates:
            return []
        q = self.embedder.encode([query])[0]
        missing = [c for c in candidates if c.chunk_id not in self._vectors]
        if missing:
            for c, v in zip(missing, self.embedder.encode([c.text for c in missing]), strict=True):
                self._vectors[c.chunk_id] = v
        scores = np.array([self._vectors[c.chunk_id] @ q for c in candidates])
        order = np.argsort(-scores, kind="stable")[: self.top_k]
        return [(candidates[i], float(scores[i])) for i in order]

    def describe(self) -> dict[str, Any]:
        return {"reranker": self.name, "model": self.embedder.name}


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder loaded from a local folder the user gives."""

    name = "cross-encoder"

    def __init__(self, model_path: str, top_k: int) -> None:
        if not Path(model_path).exists():
            raise FileNotFoundError(f"cross-encoder model folder {model_path} does not exist")
        self.model_path, self.top_k = model_path, top_k
        self._model = None
        self._lock = threading.Lock()

    def prepare(self, chunks: list[Chunk], cache: Cache | None) -> None:
        with self._lock:
            if self._model is None:
                from sentence_transformers import CrossEncoder

                self._model = CrossEncoder(self.model_path, device="cpu")

    def __call__(self, query: str, candidates: list[Chunk]) -> list[tuple[Chunk, float]]:
        if not candidates:
            return []
        scores = np.asarray(
            self._model.predict([(query, c.text) for c in candidates], show_progress_bar=False)
        ).reshape(len(candidates), -1)[:, -1]
        order = np.argsort(-scores, kind="stable")[: self.top_k]
        return [(candidates[i], float(scores[i])) for i in order]

    def describe(self) -> dict[str, Any]:
        return {"reranker": self.name, "model": self.model_path}


_NUMBERS = re.compile(r"\d+")


class LLMReranker:
    """Listwise reranking by a chat model: it returns the passage numbers, most relevant first.

    Passages the reply leaves out keep their retrieval order after the ones it
    ranks; a reply with no usable number raises (recorded as a reranking error).
    """

    name = "llm"
    PASSAGE_CHARS = 700

    def __init__(self, endpoint: Endpoint, top_k: int) -> None:
        self.endpoint, self.top_k = endpoint, top_k

    def prepare(self, chunks: list[Chunk], cache: Cache | None) -> None:
        pass  # nothing to load: the endpoint's client is made on first use

    def prompt(self, query: str, candidates: list[Chunk]) -> list[dict[str, str]]:
        passages = "\n".join(
            f"[{i}] {c.text[: self.PASSAGE_CHARS]}" for i, c in enumerate(candidates, start=1)
        )
        return [
            {
                "role": "system",
                "content": "You rank passages by how well they answer a question. Reply with JSON "
                'only: {"ranking": [passage numbers, most relevant first]}.',
            },
            {"role": "user", "content": f"Question: {query}\n\nPassages:\n{passages}"},
        ]

    def parse(self, reply: str, n: int) -> list[int]:
        try:
            numbers = json.loads(reply[reply.index("{") : reply.rindex("}") + 1])["ranking"]
        except (ValueError, KeyError, TypeError):
            numbers = _NUMBERS.findall(reply)
        order: list[int] = []
        for value in numbers:
            try:
                i = int(value) - 1
            except (TypeError, ValueError):
                continue
            if 0 <= i < n and i not in order:
                order.append(i)
        if not order:
            raise ValueError(f"the reranker's reply names no passage number: {reply[:200]!r}")
        return order + [i for i in range(n) if i not in order]

    def __call__(self, query: str, candidates: list[Chunk]) -> list[tuple[Chunk, float]]:
        if not candidates:
            return []
        reply = self.endpoint.chat(
            self.endpoint.client(), self.prompt(query, candidates), temperature=0.0
        )
        order = self.parse(reply, len(candidates))[: self.top_k]
        return [(candidates[i], float(len(order) - r)) for r, i in enumerate(order)]

    def describe(self) -> dict[str, Any]:
        return {"reranker": self.name, **self.endpoint.describe()}
