from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Measure, top


class KeywordAccuracy(Measure):
    """1 when every information point is found in the stage output, else 0."""

    NAME = "KeywordAccuracy"

    def compute(self, point_ranks: Sequence[int | None]) -> float:
        return float(all(top(self.cutoff, r) for r in point_ranks))
