from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Measure, top
from cofe.measures._unscored import Unscored
from cofe.measures._view import Step, StepView


class KeywordRecall(Measure):
    """Share of information points whose keywords are all found in the stage output.

    ``point_ranks`` holds, per point, the 1-based rank at which the union of the
    output's (filtered) chunks first holds every keyword, or ``None``. Unranked
    outputs (a document, an answer) use rank 1 for found points.
    """

    NAME = "KeywordRecall"
    STEPS = frozenset({Step.PARSE, Step.CORPUS, Step.POOL, Step.CONTEXT, Step.ANSWER})

    def compute(self, point_ranks: Sequence[int | None]) -> float:
        return sum(top(self.cutoff, r) for r in point_ranks) / len(point_ranks)

    def evaluate(self, view: StepView) -> float | Unscored:
        return self.compute(view.point_ranks)
