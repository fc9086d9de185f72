from __future__ import annotations

from cofe.measures._base import Measure
from cofe.measures._unscored import Unscored
from cofe.measures._view import Step, StepView

UNDECIDED = Unscored(
    "the offline matcher could not settle any information point of this answer: "
    "run `cofe judge` to settle them"
)


class PointRecall(Measure):
    """Share of the settled information points the answer conveys whole.

    A point is settled by a verbatim match, the LLM judge or the paraphrase
    matcher (``points.csv``: ``answer_decision``, ``answer_rule``). Undecided points
    are counted apart, never as 0; a partly conveyed point counts as not conveyed.
    ``KeywordRecall`` at the answer stays the lexical measure (every keyword as written).
    """

    NAME = "PointRecall"
    STEPS = frozenset({Step.ANSWER})

    def evaluate(self, view: StepView) -> float | Unscored:
        settled = [c for c in view.conveyed if c is not None]
        if not settled:
            return UNDECIDED
        return sum(settled) / len(settled)
