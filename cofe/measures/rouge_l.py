from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz.distance import LCSseq

from cofe.measures._base import Measure, register
from cofe.measures._unscored import Unscored
from cofe.measures._view import Step, StepView


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    return LCSseq.similarity(a, b) if a and b else 0


@register
class RougeL(Measure):
    """ROUGE-L F1 (longest common subsequence) of the answer against the reference.

    Tokens are the matcher's strict tokens: words, and CJK characters one by one.
    """

    NAME = "RougeL"
    STEPS = frozenset({Step.ANSWER})

    def compute(self, answer: Sequence[str], reference: Sequence[str]) -> float | Unscored:
        if not reference:
            return Unscored("the reference answer has no words")
        lcs = _lcs(answer, reference)
        if lcs == 0:
            return 0.0
        precision, recall = lcs / len(answer), lcs / len(reference)
        return 2 * precision * recall / (precision + recall)

    def evaluate(self, view: StepView) -> float | Unscored:
        if view.reference is None:
            return Unscored("no reference answer")
        return self.compute(view.tokens(), view.reference)


@register
class RougeLRecall(Measure):
    """How much of the reference answer the top-K context covers (ROUGE-L recall)."""

    NAME = "RougeLRecall"
    NEEDS_CUTOFF = True
    STEPS = frozenset({Step.CONTEXT})

    def compute(self, context: Sequence[str], reference: Sequence[str]) -> float | Unscored:
        if not reference:
            return Unscored("the reference answer has no words")
        return _lcs(context, reference) / len(reference)

    def evaluate(self, view: StepView) -> float | Unscored:
        if view.reference is None:
            return Unscored("no reference answer")
        return self.compute(view.tokens(), view.reference)
