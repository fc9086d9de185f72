from __future__ import annotations

from collections.abc import Sequence, Set

from cofe.measures._base import Measure


class DocRecall(Measure):
    """Share of the sample's source documents that some top-K chunk came from."""

    NAME = "DocRecall"
    NEEDS_CUTOFF = True

    def compute(self, doc_ids: Sequence[str | None], relevant: Set[str]) -> float:
        return len(relevant.intersection(doc_ids[: self.cutoff])) / len(relevant)
