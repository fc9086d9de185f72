from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Measure, register
from cofe.measures._unscored import Unscored
from cofe.measures._view import Step, StepView


@register
class ChunkIntegrity(Measure):
    """Share of information points whose keywords all sit inside one single chunk."""

    NAME = "ChunkIntegrity"
    STEPS = frozenset({Step.CORPUS})

    def compute(self, intact: Sequence[bool]) -> float:
        return sum(intact) / len(intact)

    def evaluate(self, view: StepView) -> float | Unscored:
        return self.compute(view.intact)
