from __future__ import annotations

from cofe.measures._base import register
from cofe.measures._judged_measure import NO_CLAIM, JudgedMeasure, supported_share
from cofe.measures._unscored import Unscored
from cofe.measures._view import ClaimLabels


@register
class Faithfulness(JudgedMeasure):
    """Share of the answer's claims supported by the context the generator saw (RAGAS's
    definition: claims extracted from the answer, one verdict per claim against the context)."""

    NAME = "Faithfulness"

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        return supported_share(labels.context, "the context")


@register
class Hallucination(JudgedMeasure):
    """RAGChecker's hallucination: share of the answer's claims that are wrong (the reference
    does not support them) and not in the context either -- invented."""

    NAME = "Hallucination"
    NEEDS_REFERENCE = True
    READS = frozenset({"Faithfulness", "ClaimPrecision"})  # the context and reference labels
    HIGHER_IS_BETTER = False

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        if not labels.context:
            return NO_CLAIM
        if isinstance(labels.reference, Unscored):
            return labels.reference
        pairs = list(zip(labels.context, labels.reference, strict=True))
        return sum(not c and not r for c, r in pairs) / len(pairs)


@register
class SelfKnowledge(JudgedMeasure):
    """RAGChecker's self-knowledge: share of the answer's claims that are right (the reference
    supports them) but not in the context -- from the model's own knowledge."""

    NAME = "SelfKnowledge"
    NEEDS_REFERENCE = True
    READS = frozenset({"Faithfulness", "ClaimPrecision"})

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        if not labels.context:
            return NO_CLAIM
        if isinstance(labels.reference, Unscored):
            return labels.reference
        pairs = list(zip(labels.context, labels.reference, strict=True))
        return sum(not c and bool(r) for c, r in pairs) / len(pairs)
