"""BM25, dense and hybrid retrieval over a real chunk corpus."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cofe.pipeline import (
    BM25Retriever,
    Cache,
    DenseRetriever,
    HybridRetriever,
    reciprocal_rank_fusion,
)
from cofe.pipeline._retrieve import top_positions
from cofe.runlog import Chunk

TEXTS = [
    "Paris is the capital and most populous city of France.",
    "The Amazon rainforest covers much of the Amazon basin of South America.",
    "Photosynthesis turns light energy into chemical energy in plants.",
    "北京是中华人民共和国的首都，也是政治和文化中心。",
    "The stock market fell sharply after the announcement of new tariffs.",
]
CHUNKS = [Chunk(chunk_id=f"c{i}", doc_id="d", text=t) for i, t in enumerate(TEXTS)]


def test_bm25_ranks_the_lexical_match_first_and_handles_chinese(tmp_path: Path) -> None:
    retriever = BM25Retriever()
    retriever.index(CHUNKS, Cache(tmp_path))
    assert retriever.search("capital city of France", 3)[0][0] == 0
    assert retriever.search("中国的首都", 3)[0][0] == 3
    assert retriever.search("zzzz unknownword", 3) == []  # no term in common: nothing, not noise
    again = BM25Retriever()
    again.index(CHUNKS, Cache(tmp_path))  # loaded from the cached index
    assert again.search("Amazon basin", 2) == retriever.search("Amazon basin", 2)


def test_dense_retrieval_finds_a_paraphrase_with_no_shared_word(tmp_path: Path) -> None:
    retriever = DenseRetriever()
    retriever.index(CHUNKS, Cache(tmp_path))
    hits = retriever.search("How do green leaves make food from sunshine?", 5)
    assert hits[0][0] == 2
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    bm25 = BM25Retriever()
    bm25.index(CHUNKS, None)
    assert all(
        pos != 2 for pos, _ in bm25.search("How do green leaves make food from sunshine?", 5)
    )


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    fused = reciprocal_rank_fusion([[(1, 9.0), (2, 8.0), (3, 7.0)], [(3, 0.9), (1, 0.8)]], k=3)
    assert [pos for pos, _ in fused] == [1, 3, 2]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)


def test_hybrid_returns_k_fused_results() -> None:
    retriever = HybridRetriever()
    retriever.index(CHUNKS, None)
    hits = retriever.search("capital of France", 3)
    assert len(hits) == 3 and hits[0][0] == 0


def test_bm25_ranks_equal_scores_in_corpus_order() -> None:
    # four copies of one text score the same for any query: the pool must not depend on
    # how numpy (or jax) selects the top k
    texts = ["tariffs and markets", "photosynthesis in plants"] + ["the capital of France"] * 4
    chunks = [Chunk(chunk_id=f"t{i}", doc_id="d", text=t) for i, t in enumerate(texts)]
    retriever = BM25Retriever()
    retriever.index(chunks, None)
    for k in (1, 2, 3, 4, 6):
        hits = retriever.search("capital of France", k)
        assert [pos for pos, _ in hits] == [2, 3, 4, 5][:k]
        assert len({s for _, s in hits}) == 1


def test_top_positions_breaks_ties_by_position_at_the_cut_and_inside_it() -> None:
    scores = np.array([1.0, 3.0, 2.0, 3.0, 2.0, 2.0, 0.5, 3.0], dtype=np.float32)
    assert top_positions(scores, 2).tolist() == [1, 3]
    assert top_positions(scores, 5).tolist() == [1, 3, 7, 2, 4]
    assert top_positions(scores, 20).tolist() == [1, 3, 7, 2, 4, 5, 0, 6]
    assert top_positions(scores, 0).tolist() == []
    assert top_positions(np.zeros(0), 3).tolist() == []
