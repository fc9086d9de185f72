"""RAGAS's LLM context measures, as cross-checks of the keyword measures on the same samples."""

from __future__ import annotations

from cofe.measures._base import Need, register
from cofe.measures._judged_measure import NO_REFERENCE_CLAIM, JudgedMeasure
from cofe.measures._unscored import Unscored
from cofe.measures._view import ClaimLabels, Step


@register
class ContextRecall(JudgedMeasure):
    """Share of the reference answer's claims the context supports, as the LLM judge labels
    them (RAGAS's context recall); compare with the keyword measure ``KeywordRecall@K``."""

    NAME = "ContextRecall"
    STEPS = frozenset({Step.CONTEXT})
    # the context's labels mean what the generator saw only when how many it saw is known
    NEEDS = frozenset({Need.JUDGED, Need.TOP_K})
    NEEDS_REFERENCE = True

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        found = labels.reference_in_context
        if not found:
            return NO_REFERENCE_CLAIM
        if any(label is None for label in found):
            return Unscored("the reference claims were not checked against the context")
        return sum(bool(label) for label in found) / len(found)


@register
class ContextPrecision(JudgedMeasure):
    """RAGAS's context precision@K: the mean of precision@k over the ranks k of the chunks the
    judge calls useful for reaching the reference answer (0 when none is)."""

    NAME = "ContextPrecision"
    NEEDS_CUTOFF = True
    STEPS = frozenset({Step.CONTEXT})
    NEEDS_REFERENCE = True

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        if labels.useful is None:
            return Unscored("the chunks were not judged")
        useful = labels.useful[: self.cutoff]
        if not useful:
            return Unscored("the context holds no chunk")
        hits, total = 0, 0.0
        for k, flag in enumerate(useful, start=1):
            if flag:
                hits += 1
                total += hits / k
        return total / hits if hits else 0.0
