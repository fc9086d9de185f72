from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Measure, register
from cofe.measures._unscored import Unscored
from cofe.measures._view import Step, StepView


@register
class CoarsePrecision(Measure):
    """Share of the top-K chunks that mention a coarse keyword (the query's entity).

    The denominator is the number of chunks actually returned within K.
    """

    NAME = "CoarsePrecision"
    NEEDS_CUTOFF = True
    STEPS = frozenset({Step.POOL, Step.CONTEXT})

    def compute(self, passes_coarse: Sequence[bool]) -> float | Unscored:
        head = passes_coarse[: self.cutoff]
        if not head:
            return Unscored("the ranked list is empty")
        return sum(head) / len(head)

    def evaluate(self, view: StepView) -> float | Unscored:
        if not view.has_coarse:
            return Unscored("the sample has no usable coarse keyword")
        return self.compute(view.mentions_coarse)
