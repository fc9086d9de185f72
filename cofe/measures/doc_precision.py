from __future__ import annotations

from collections.abc import Sequence, Set

from cofe.measures._base import Measure, register
from cofe.measures._unscored import Unscored
from cofe.measures._view import Docs, Step, StepView, from_relevant


@register
class DocPrecision(Measure):
    """Share of the top-K chunks that came from one of the sample's source documents."""

    NAME = "DocPrecision"
    NEEDS_CUTOFF = True
    STEPS = frozenset({Step.POOL, Step.CONTEXT})

    def compute(self, doc_ids: Sequence[Docs], relevant: Set[str]) -> float | Unscored:
        head = doc_ids[: self.cutoff]
        if not head:
            return Unscored("the ranked list is empty")
        return sum(from_relevant(doc, relevant) for doc in head) / len(head)

    def evaluate(self, view: StepView) -> float | Unscored:
        if isinstance(view.relevant, Unscored):
            return view.relevant
        return self.compute(view.doc_ids, view.relevant)
