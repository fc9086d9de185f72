from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Measure, top


class RerankLoss(Measure):
    """Share of information points complete in the candidate pool but not in the top-K context."""

    NAME = "RerankLoss"
    NEEDS_CUTOFF = True

    def compute(
        self, pool_ranks: Sequence[int | None], context_ranks: Sequence[int | None]
    ) -> float:
        lost = sum(
            pool is not None and not top(self.cutoff, context)
            for pool, context in zip(pool_ranks, context_ranks, strict=True)
        )
        return lost / len(pool_ranks)
