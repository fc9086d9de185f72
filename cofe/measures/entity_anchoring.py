from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Measure, register
from cofe.measures._unscored import Unscored
from cofe.measures._view import Step, StepView


@register
class EntityAnchoring(Measure):
    """Share of intact information points held by a chunk that also names the entity.

    A chunk that holds a fact but never names what the fact is about (a
    pronoun, a title said once at the top of the document) is a chunking
    *risk*: a retriever matching the entity may miss it. It is not a loss, so
    it never decides a verdict; ``points.csv`` marks each such point
    (``anchored``) and the summary says how often the retriever found it anyway.
    """

    NAME = "EntityAnchoring"
    STEPS = frozenset({Step.CORPUS})

    def compute(self, anchored: Sequence[bool | None]) -> float | Unscored:
        judged = [a for a in anchored if a is not None]
        if not judged:
            return Unscored("no chunk holds a whole information point")
        return sum(judged) / len(judged)

    def evaluate(self, view: StepView) -> float | Unscored:
        if not view.has_coarse:
            return Unscored("the sample has no usable coarse keyword")
        return self.compute(view.anchored)
