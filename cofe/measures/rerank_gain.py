from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Measure
from cofe.measures.keyword_recall import KeywordRecall


class RerankGain(Measure):
    """KeywordRecall@K of the reranked context minus that of the retriever's own top-K."""

    NAME = "RerankGain"
    NEEDS_CUTOFF = True

    def compute(
        self, pool_ranks: Sequence[int | None], context_ranks: Sequence[int | None]
    ) -> float:
        recall = KeywordRecall(self.cutoff)
        return recall.compute(context_ranks) - recall.compute(pool_ranks)
