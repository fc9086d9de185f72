from __future__ import annotations

from collections.abc import Sequence, Set

from cofe.measures._base import Measure, register
from cofe.measures._unscored import Unscored
from cofe.measures._view import Docs, Step, StepView, docs_of


@register
class DocRecall(Measure):
    """Share of the sample's source documents that some top-K chunk came from."""

    NAME = "DocRecall"
    NEEDS_CUTOFF = True
    STEPS = frozenset({Step.POOL, Step.CONTEXT})

    def compute(self, doc_ids: Sequence[Docs], relevant: Set[str]) -> float:
        return len(relevant & docs_of(doc_ids[: self.cutoff])) / len(relevant)

    def evaluate(self, view: StepView) -> float | Unscored:
        if isinstance(view.relevant, Unscored):
            return view.relevant
        return self.compute(view.doc_ids, view.relevant)
