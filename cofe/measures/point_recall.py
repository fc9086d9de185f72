from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Measure, register
from cofe.measures._unscored import Unscored
from cofe.measures._view import Step, StepView

UNDECIDED = Unscored(
    "the offline matcher could not settle any information point of this answer: "
    "run `cofe judge` to settle them"
)


def settled_share(conveyed: Sequence[bool | None]) -> float | None:
    """Share of the settled points (True/False) that are conveyed; None when none is settled.
    The measure and the waterfall's answer row read it alike."""
    settled = [c for c in conveyed if c is not None]
    return sum(settled) / len(settled) if settled else None


@register
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
        share = settled_share(view.conveyed)
        return UNDECIDED if share is None else share
