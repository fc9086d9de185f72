from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Measure, Unscored


class CoarsePrecision(Measure):
    """Share of the top-K chunks that mention a coarse keyword (the query's entity).

    The denominator is the number of chunks actually returned within K.
    """

    NAME = "CoarsePrecision"
    NEEDS_CUTOFF = True

    def compute(self, passes_coarse: Sequence[bool]) -> float | Unscored:
        head = passes_coarse[: self.cutoff]
        if not head:
            return Unscored("the ranked list is empty")
        return sum(head) / len(head)
