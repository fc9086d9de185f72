from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Measure, Need, register, top
from cofe.measures._unscored import Unscored
from cofe.measures._view import Step, StepView


@register
class RerankLoss(Measure):
    """Share of information points complete in the candidate pool but not in the top-K context."""

    NAME = "RerankLoss"
    NEEDS_CUTOFF = True
    STEPS = frozenset({Step.CONTEXT})
    NEEDS = frozenset({Need.RERANKER})
    HIGHER_IS_BETTER = False  # points the reranker pushed out of the context

    def compute(
        self, pool_ranks: Sequence[int | None], context_ranks: Sequence[int | None]
    ) -> float:
        lost = sum(
            pool is not None and not top(self.cutoff, context)
            for pool, context in zip(pool_ranks, context_ranks, strict=True)
        )
        return lost / len(pool_ranks)

    def evaluate(self, view: StepView) -> float | Unscored:
        if isinstance(view.pool_ranks, Unscored):
            return view.pool_ranks
        return self.compute(view.pool_ranks, view.point_ranks)
