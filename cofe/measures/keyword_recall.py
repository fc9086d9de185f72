from __future__ import annotations

from collections.abc import Sequence

from cofe.chain import STEP_SPECS
from cofe.measures._base import Cutoff, Measure, register, top
from cofe.measures._unscored import Unscored
from cofe.measures._view import StepView


@register
class KeywordRecall(Measure):
    """Share of information points whose keywords are all found in the stage output.

    ``point_ranks`` holds, per point, the 1-based rank at which the union of the
    output's (filtered) chunks first holds every keyword, or ``None``. Unranked
    outputs (a document, an answer) use rank 1 for found points.
    """

    NAME = "KeywordRecall"
    # every step the scorer judges, as cofe.chain declares them (a step added there too)
    STEPS = frozenset(spec.step for spec in STEP_SPECS if spec.reads is not None)
    CUTOFF = Cutoff.EACH

    def compute(self, point_ranks: Sequence[int | None]) -> float:
        return sum(top(self.cutoff, r) for r in point_ranks) / len(point_ranks)

    def evaluate(self, view: StepView) -> float | Unscored:
        return self.compute(view.point_ranks)
