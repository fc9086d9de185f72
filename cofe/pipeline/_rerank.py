"""Rerankers of the candidate pool: MiniLM re-scoring, a local cross-encoder, or an LLM."""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol

import numpy as np
from pydantic import BaseModel, Field, create_model

from cofe._cache import Cache
from cofe._errors import EndpointError
from cofe._progress import progress_wanted
from cofe.llm import Endpoint, LLMClient, Usage
from cofe.pipeline._embed import Embedder, shared_embedder
from cofe.pipeline._offline import quiet_loading
from cofe.runlog import Chunk

if TYPE_CHECKING:
    from sentence_transformers import CrossEncoder


class Reranker(Protocol):
    """What the default pipeline asks of a reranker."""

    name: str

    def prepare(self, chunks: list[Chunk], cache: Cache | None) -> None: ...

    def __call__(self, query: str, candidates: list[Chunk]) -> list[tuple[Chunk, float]]: ...

    def describe(self) -> dict[str, Any]: ...


class MiniLMReranker:
    """Re-scores the pool by MiniLM cosine similarity (a bi-encoder; no cross-encoder ships offline)."""

    name = "minilm"

    def __init__(self, top_k: int, embedder: Embedder | None = None) -> None:
        self.top_k = top_k
        self.embedder = embedder or shared_embedder()
        self._vectors: dict[str, np.ndarray] = {}

    def prepare(self, chunks: list[Chunk], cache: Cache | None) -> None:
        texts = [c.text for c in chunks]
        matrix = self.embedder.encode_cached(texts, cache, progress=progress_wanted())
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
        self._model: CrossEncoder | None = None
        self._lock = threading.Lock()

    def prepare(self, chunks: list[Chunk], cache: Cache | None) -> None:
        with self._lock:
            if self._model is None:
                with quiet_loading():
                    from sentence_transformers import CrossEncoder

                    self._model = CrossEncoder(self.model_path, device="cpu")

    def __call__(self, query: str, candidates: list[Chunk]) -> list[tuple[Chunk, float]]:
        if not candidates:
            return []
        if self._model is None:
            raise RuntimeError("CrossEncoderReranker called before prepare()")
        scores = np.asarray(
            self._model.predict([(query, c.text) for c in candidates], show_progress_bar=False)
        ).reshape(len(candidates), -1)[:, -1]
        order = np.argsort(-scores, kind="stable")[: self.top_k]
        return [(candidates[i], float(scores[i])) for i in order]

    def describe(self) -> dict[str, Any]:
        return {"reranker": self.name, "model": self.model_path}


class RerankFailed(EndpointError, RuntimeError):
    """The LLM gave no valid ranking for one query, even after the client's one repair call."""

    exit_code = 1


class Ranking(BaseModel):
    ranking: list[int]  # bounded by the pool's size in each ``ranking_model``


@lru_cache(maxsize=64)
def ranking_model(n: int) -> type[Ranking]:
    """The reply asked of the LLM reranker for ``n`` passages: ``{"ranking": [1..n, ...]}``."""
    number = Annotated[int, Field(ge=1, le=n)]
    return create_model(
        "Ranking",
        __base__=Ranking,
        ranking=(list[number], Field(min_length=1, description="passage numbers, best first")),
    )


class LLMReranker:
    """Listwise reranking by a chat model, its reply validated as ``{"ranking": [numbers]}``.

    The call goes through :meth:`cofe.llm.LLMClient.structured` (``client``: an
    endpoint, or a client shared with other stages): the reply must hold a
    JSON object whose ``ranking`` lists passage numbers from 1 to the pool
    size, most relevant first; anything else (prose, numbers out of range)
    gets one repair call with the validation error. Replies are cached and
    counted in ``usage``. Repeated numbers count once; passages the ranking
    leaves out keep their retrieval order after the ones it ranks.

    When there is still no valid ranking (or the endpoint cannot be reached),
    the reranker raises :class:`RerankFailed` with the client's reason. It
    does not silently fall back to the retrieval order, which would be scored
    as if the reranker had chosen it: the runner records the error for that
    sample at the reranking stage, the record keeps the retrieval pool in its
    order, and no context or answer is given for it.
    """

    name = "llm"
    PASSAGE_CHARS = 700

    def __init__(self, client: Endpoint | LLMClient, top_k: int, *, max_tokens: int = 512) -> None:
        if isinstance(client, Endpoint):
            client = LLMClient(client, max_tokens=max_tokens, temperature=0.0)
        self.client, self.top_k = client, top_k
        self.endpoint = client.endpoint

    @property
    def usage(self) -> Usage:
        return self.client.usage

    def prepare(self, chunks: list[Chunk], cache: Cache | None) -> None:
        self.client.use_cache(cache)  # the endpoint's HTTP client is made on first use

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

    def order(self, query: str, candidates: list[Chunk]) -> list[int]:
        """Positions in ``candidates``, best first: the model's ranking, then the rest in order."""
        reply = self.client.structured(
            self.prompt(query, candidates), ranking_model(len(candidates))
        )
        if reply.value is None:
            raise RerankFailed(f"no valid ranking from the LLM reranker: {reply.error}")
        ranked = dict.fromkeys(number - 1 for number in reply.value.ranking)  # first mention
        return [*ranked, *(i for i in range(len(candidates)) if i not in ranked)]

    def __call__(self, query: str, candidates: list[Chunk]) -> list[tuple[Chunk, float]]:
        if not candidates:
            return []
        order = self.order(query, candidates)[: self.top_k]
        return [(candidates[i], float(len(order) - r)) for r, i in enumerate(order)]

    def describe(self) -> dict[str, Any]:
        return {"reranker": self.name, **self.endpoint.describe()}
