from __future__ import annotations

import math
from collections.abc import Sequence, Set

from cofe.measures._base import Measure, register
from cofe.measures._unscored import Unscored
from cofe.measures._view import Docs, Step, StepView, from_relevant


@register
class NDCG(Measure):
    """nDCG@K with binary gains: a chunk is relevant when it came from a source document.

    The ideal ranking puts ``min(K, chunks of the source documents in the corpus)``
    relevant chunks first.
    """

    NAME = "nDCG"
    NEEDS_CUTOFF = True
    STEPS = frozenset({Step.POOL, Step.CONTEXT})

    def compute(
        self, doc_ids: Sequence[Docs], relevant: Set[str], relevant_in_corpus: int
    ) -> float | Unscored:
        if relevant_in_corpus == 0:
            return Unscored("no chunk of the source document is in the corpus")
        assert self.cutoff is not None
        dcg = sum(
            1.0 / math.log2(rank + 1)
            for rank, doc in enumerate(doc_ids[: self.cutoff], start=1)
            if from_relevant(doc, relevant)
        )
        ideal = sum(
            1.0 / math.log2(rank + 1) for rank in range(1, min(self.cutoff, relevant_in_corpus) + 1)
        )
        return dcg / ideal

    def evaluate(self, view: StepView) -> float | Unscored:
        if isinstance(view.relevant, Unscored):
            return view.relevant
        return self.compute(view.doc_ids, view.relevant, view.relevant_in_corpus)
