from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Cutoff, Measure, register, top
from cofe.measures._unscored import Unscored
from cofe.measures._view import Step, StepView


@register
class KeywordAccuracy(Measure):
    """1 when every information point is found in the stage output, else 0."""

    NAME = "KeywordAccuracy"
    STEPS = frozenset({Step.PARSE, Step.CORPUS, Step.POOL, Step.CONTEXT, Step.ANSWER})
    TAKEN_AT = frozenset({Step.POOL, Step.CONTEXT})  # a share of the ranked list's items
    CUTOFF = Cutoff.EACH

    def compute(self, point_ranks: Sequence[int | None]) -> float:
        return float(all(top(self.cutoff, r) for r in point_ranks))

    def evaluate(self, view: StepView) -> float | Unscored:
        return self.compute(view.point_ranks)
