from __future__ import annotations

from collections.abc import Sequence, Set

from cofe.measures._base import Measure, Unscored


class DocPrecision(Measure):
    """Share of the top-K chunks that came from one of the sample's source documents."""

    NAME = "DocPrecision"
    NEEDS_CUTOFF = True

    def compute(self, doc_ids: Sequence[str | None], relevant: Set[str]) -> float | Unscored:
        head = doc_ids[: self.cutoff]
        if not head:
            return Unscored("the ranked list is empty")
        return sum(doc in relevant for doc in head) / len(head)
