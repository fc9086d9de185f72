from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Measure


class ChunkIntegrity(Measure):
    """Share of information points whose keywords all sit inside one single chunk."""

    NAME = "ChunkIntegrity"

    def compute(self, intact: Sequence[bool]) -> float:
        return sum(intact) / len(intact)
