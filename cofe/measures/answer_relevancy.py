from __future__ import annotations

from cofe.measures._base import Unscored
from cofe.measures._judged import JudgedMeasure
from cofe.measures._view import ClaimLabels


class AnswerRelevancy(JudgedMeasure):
    """RAGAS's answer relevancy: the mean cosine between the question and the questions the
    judge says the answer answers (MiniLM embeddings); 0 for a noncommittal answer."""

    NAME = "AnswerRelevancy"

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        if labels.relevancy is None:
            return Unscored(labels.no_relevancy or "no answer relevancy was computed")
        return labels.relevancy


class AnswerSimilarity(JudgedMeasure):
    """Cosine of the answer's and the reference answer's embeddings (MiniLM; no LLM call)."""

    NAME = "AnswerSimilarity"

    def from_labels(self, labels: ClaimLabels) -> float | Unscored:
        if labels.similarity is None:
            return Unscored(labels.no_similarity or "no answer similarity was computed")
        return labels.similarity
