from __future__ import annotations

from cofe.measures._base import register
from cofe.measures._judged_measure import NO_REFERENCE_CLAIM, JudgedMeasure, supported_share
from cofe.measures._unscored import Unscored
from cofe.measures._view import ClaimLabels


@register
class ClaimPrecision(JudgedMeasure):
    """Share of the answer's claims the reference answer supports (RAGChecker's precision)."""

    NAME = "ClaimPrecision"
    NEEDS_REFERENCE = True

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        return supported_share(labels.reference, "the reference answer")


@register
class ClaimRecall(JudgedMeasure):
    """Share of the reference answer's claims the answer states (RAGChecker's recall)."""

    NAME = "ClaimRecall"
    NEEDS_REFERENCE = True

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        found = labels.reference_in_answer
        return sum(found) / len(found) if found else NO_REFERENCE_CLAIM


@register
class AnswerCorrectness(JudgedMeasure):
    """F1 of ClaimPrecision and ClaimRecall: claim-level correctness against the reference
    (the factual-correctness F1 of RAGAS and RAGChecker)."""

    NAME = "AnswerCorrectness"
    NEEDS_REFERENCE = True

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        precision = ClaimPrecision().from_labels(labels)
        if isinstance(precision, Unscored):
            return precision
        recall = ClaimRecall().from_labels(labels)
        if isinstance(recall, Unscored):
            return recall
        return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


@register
class CorrectnessScore(JudgedMeasure):
    """The judge's 1-5 correctness of the answer against the reference (LlamaIndex's
    correctness-evaluator scale: 1 irrelevant, 2-3 relevant with mistakes, 4-5 correct)."""

    NAME = "CorrectnessScore"
    NEEDS_REFERENCE = True

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        correctness = labels.correctness
        return correctness if isinstance(correctness, Unscored) else float(correctness)
