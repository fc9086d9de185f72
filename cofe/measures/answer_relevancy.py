from __future__ import annotations

from cofe.measures._base import Measure, Unscored
from cofe.measures._view import Step, StepView


class AnswerRelevancy(Measure):
    """RAGAS's answer relevancy: the mean cosine between the question and the questions the
    judge says the answer answers (MiniLM embeddings); 0 for a noncommittal answer."""

    NAME = "AnswerRelevancy"
    STEPS = frozenset({Step.ANSWER})

    def evaluate(self, view: StepView) -> float | Unscored:
        if isinstance(view.claims, Unscored):
            return view.claims
        if view.claims.relevancy is None:
            return Unscored(view.claims.no_relevancy or "no answer relevancy was computed")
        return view.claims.relevancy


class AnswerSimilarity(Measure):
    """Cosine of the answer's and the reference answer's embeddings (MiniLM; no LLM call)."""

    NAME = "AnswerSimilarity"
    STEPS = frozenset({Step.ANSWER})

    def evaluate(self, view: StepView) -> float | Unscored:
        if isinstance(view.claims, Unscored):
            return view.claims
        if view.claims.similarity is None:
            return Unscored(view.claims.no_similarity or "no answer similarity was computed")
        return view.claims.similarity
