"""Retrievers over a chunk corpus: BM25 (bm25s), dense (MiniLM), hybrid (reciprocal-rank fusion)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from cofe._cache import Cache, content_key, text_digests
from cofe._progress import progress_wanted
from cofe.matching import strict_tokens
from cofe.pipeline._embed import Embedder, shared_embedder
from cofe.runlog import Chunk

if TYPE_CHECKING:
    import bm25s  # untyped: its BM25 is Any to mypy

RRF_K = 60  # the constant of Cormack et al. (2009)


class RetrieverKind(StrEnum):
    BM25 = "bm25"
    DENSE = "dense"
    HYBRID = "hybrid"


class Retriever(Protocol):
    name: str

    def index(self, chunks: list[Chunk], cache: Cache | None) -> None: ...

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Positions of the best ``k`` chunks in the indexed list, best first, with scores."""
        ...


class BM25Retriever:
    """Okapi BM25 (bm25s defaults k1=1.5, b=0.75) over cofe's strict tokens.

    Strict tokens split CJK text character by character, so Chinese needs no
    word segmenter. Equal scores are ranked in corpus order; chunks scoring 0
    (no query term) are left out.
    """

    name = "bm25"

    def __init__(self) -> None:
        self._bm25: bm25s.BM25 | None = None
        self._size = 0

    def index(self, chunks: list[Chunk], cache: Cache | None) -> None:
        import bm25s

        def build(folder: Path | None = None) -> bm25s.BM25:
            model = bm25s.BM25()
            model.index([strict_tokens(c.text) for c in chunks], show_progress=False)
            if folder is not None:
                model.save(str(folder))
            return model

        self._size = len(chunks)
        if cache is None or cache.root is None:
            self._bm25 = build()
            return
        folder, _ = cache.directory(
            "bm25", content_key("bm25-1", text_digests(c.text for c in chunks)), build
        )
        self._bm25 = bm25s.BM25.load(str(folder))

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        if self._bm25 is None:
            raise RuntimeError("BM25Retriever.search before index()")
        tokens = strict_tokens(query)
        k = min(k, self._size)
        if not tokens or k == 0:
            return []
        # every chunk's score, then our own selection: bm25s's top-k (numpy or jax) leaves
        # the order of equal scores to the machine
        scores = np.asarray(self._bm25.get_scores(tokens))
        return [(int(i), float(scores[i])) for i in top_positions(scores, k) if scores[i] > 0]


class DenseRetriever:
    """Exact cosine search over MiniLM embeddings (a matrix product: fine up to ~10^6 chunks)."""

    name = "dense"

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder = embedder or shared_embedder()
        self._matrix: np.ndarray | None = None

    def index(self, chunks: list[Chunk], cache: Cache | None) -> None:
        texts = [c.text for c in chunks]
        self._matrix = self.embedder.encode_cached(texts, cache, progress=progress_wanted())

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        if self._matrix is None:
            raise RuntimeError("DenseRetriever.search before index()")
        if len(self._matrix) == 0:
            return []
        scores = self._matrix @ self.embedder.encode([query])[0]
        return [(int(i), float(scores[i])) for i in top_positions(scores, k)]


def top_positions(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest scores, best first; equal scores in corpus order.

    The tie order is part of the result (it decides which chunks make a pool
    cut at ``k``), so it must not depend on how numpy or jax select: select
    by value, then sort by (score descending, position ascending).
    """
    n = len(scores)
    k = min(k, n)
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    if k < n:
        kth = np.partition(scores, n - k)[n - k]  # the k-th highest score
        positions = np.flatnonzero(scores >= kth)  # ascending: ties stay in corpus order
    else:
        positions = np.arange(n)
    return positions[np.argsort(-scores[positions], kind="stable")][:k]


def reciprocal_rank_fusion(lists: list[list[tuple[int, float]]], k: int) -> list[tuple[int, float]]:
    fused: dict[int, float] = {}
    for ranked in lists:
        for rank, (pos, _) in enumerate(ranked, start=1):
            fused[pos] = fused.get(pos, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:k]


class HybridRetriever:
    """BM25 and dense lists fused by reciprocal rank (each list twice as deep as asked)."""

    name = "hybrid"

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.parts = (BM25Retriever(), DenseRetriever(embedder))

    def index(self, chunks: list[Chunk], cache: Cache | None) -> None:
        for part in self.parts:
            part.index(chunks, cache)

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        return reciprocal_rank_fusion([p.search(query, 2 * k) for p in self.parts], k)


def make_retriever(kind: RetrieverKind) -> Retriever:
    kinds: dict[RetrieverKind, Callable[[], Retriever]] = {
        RetrieverKind.BM25: BM25Retriever,
        RetrieverKind.DENSE: DenseRetriever,
        RetrieverKind.HYBRID: HybridRetriever,
    }
    return kinds[kind]()
