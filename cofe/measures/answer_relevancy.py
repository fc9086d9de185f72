from __future__ import annotations

from cofe.measures._base import register
from cofe.measures._judged_measure import JudgedMeasure
from cofe.measures._unscored import Unscored
from cofe.measures._view import ClaimLabels, StepView


def unit(value: float) -> float:
    """A cosine-based value as the measures report it: in [0, 1] (a float error of the
    embeddings gives 1.0000001; an opposed pair a negative cosine, reported as 0)."""
    return min(1.0, max(0.0, float(value)))


@register
class AnswerRelevancy(JudgedMeasure):
    """RAGAS's answer relevancy: the mean cosine between the question and the questions the
    judge says the answer answers (MiniLM embeddings); 0 for a noncommittal answer. In [0, 1];
    kept when only the checks call failed (it needs the claims call alone)."""

    NAME = "AnswerRelevancy"

    def evaluate(self, view: StepView) -> float | Unscored:
        labels = view.claims
        if (  # kept when the calls failed, unless a gate found it noise
            isinstance(labels, ClaimLabels)
            and labels.failed
            and not isinstance(labels.relevancy, Unscored)
            and not any(name == self.NAME for name, _ in labels.unreliable)
        ):
            return unit(labels.relevancy)
        return super().evaluate(view)

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        relevancy = labels.relevancy
        return relevancy if isinstance(relevancy, Unscored) else unit(relevancy)


@register
class AnswerSimilarity(JudgedMeasure):
    """Cosine of the answer's and the reference answer's embeddings (MiniLM; no LLM call), in
    [0, 1]: kept when the judge's calls for the sample failed."""

    NAME = "AnswerSimilarity"

    def evaluate(self, view: StepView) -> float | Unscored:
        labels = view.claims
        if (  # kept when the calls failed, unless a gate found it noise
            isinstance(labels, ClaimLabels)
            and labels.failed
            and not isinstance(labels.similarity, Unscored)
            and not any(name == self.NAME for name, _ in labels.unreliable)
        ):
            return unit(labels.similarity)
        return super().evaluate(view)

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        similarity = labels.similarity
        return similarity if isinstance(similarity, Unscored) else unit(similarity)
