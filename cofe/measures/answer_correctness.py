from __future__ import annotations

from cofe.measures._base import Measure, Unscored
from cofe.measures._view import ClaimLabels, Step, StepView
from cofe.measures.faithfulness import supported_share


def _labels(view: StepView) -> ClaimLabels | Unscored:
    if isinstance(view.claims, Unscored):
        return view.claims
    if view.claims.no_reference:
        return Unscored(view.claims.no_reference)
    return view.claims


class ClaimPrecision(Measure):
    """Share of the answer's claims the reference answer supports (RAGChecker's precision)."""

    NAME = "ClaimPrecision"
    STEPS = frozenset({Step.ANSWER})

    def evaluate(self, view: StepView) -> float | Unscored:
        labels = _labels(view)
        if isinstance(labels, Unscored):
            return labels
        return supported_share(labels.reference, "the reference answer")


class ClaimRecall(Measure):
    """Share of the reference answer's claims the answer states (RAGChecker's recall)."""

    NAME = "ClaimRecall"
    STEPS = frozenset({Step.ANSWER})

    def evaluate(self, view: StepView) -> float | Unscored:
        labels = _labels(view)
        if isinstance(labels, Unscored):
            return labels
        if not labels.reference_in_answer:
            return Unscored("the reference answer states no claim to look for")
        return sum(labels.reference_in_answer) / len(labels.reference_in_answer)


class AnswerCorrectness(Measure):
    """F1 of ClaimPrecision and ClaimRecall: claim-level correctness against the reference
    (the factual-correctness F1 of RAGAS and RAGChecker)."""

    NAME = "AnswerCorrectness"
    STEPS = frozenset({Step.ANSWER})

    def evaluate(self, view: StepView) -> float | Unscored:
        precision = ClaimPrecision().evaluate(view)
        if isinstance(precision, Unscored):
            return precision
        recall = ClaimRecall().evaluate(view)
        if isinstance(recall, Unscored):
            return recall
        return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


class CorrectnessScore(Measure):
    """The judge's 1-5 correctness of the answer against the reference (LlamaIndex's
    correctness-evaluator scale: 1 irrelevant, 2-3 relevant with mistakes, 4-5 correct)."""

    NAME = "CorrectnessScore"
    STEPS = frozenset({Step.ANSWER})

    def evaluate(self, view: StepView) -> float | Unscored:
        labels = _labels(view)
        if isinstance(labels, Unscored):
            return labels
        if labels.correctness is None:
            return Unscored("the judge gave no correctness score")
        return float(labels.correctness)
