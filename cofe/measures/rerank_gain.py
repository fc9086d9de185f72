from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Measure, Need, register
from cofe.measures._unscored import Unscored
from cofe.measures._view import Step, StepView
from cofe.measures.keyword_recall import KeywordRecall


@register
class RerankGain(Measure):
    """KeywordRecall@K of the reranked context minus that of the retriever's own top-K."""

    NAME = "RerankGain"
    NEEDS_CUTOFF = True
    STEPS = frozenset({Step.CONTEXT})
    NEEDS = frozenset({Need.RERANKER})

    def compute(
        self, pool_ranks: Sequence[int | None], context_ranks: Sequence[int | None]
    ) -> float:
        recall = KeywordRecall(self.cutoff)
        return recall.compute(context_ranks) - recall.compute(pool_ranks)

    def evaluate(self, view: StepView) -> float | Unscored:
        if isinstance(view.pool_ranks, Unscored):
            return view.pool_ranks
        return self.compute(view.pool_ranks, view.point_ranks)
