"""RAGAS's LLM context measures, as cross-checks of the keyword measures on the same samples."""

from __future__ import annotations

from cofe.measures._base import Measure, Unscored
from cofe.measures._view import Step, StepView


class ContextRecall(Measure):
    """Share of the reference answer's claims the context supports, as the LLM judge labels
    them (RAGAS's context recall); compare with the keyword measure ``KeywordRecall@K``."""

    NAME = "ContextRecall"
    STEPS = frozenset({Step.CONTEXT})

    def evaluate(self, view: StepView) -> float | Unscored:
        if isinstance(view.claims, Unscored):
            return view.claims
        if view.claims.no_reference:
            return Unscored(view.claims.no_reference)
        labels = view.claims.reference_in_context
        if not labels:
            return Unscored("the reference answer states no claim to look for")
        if any(label is None for label in labels):
            return Unscored("the reference claims were not checked against the context")
        return sum(bool(label) for label in labels) / len(labels)


class ContextPrecision(Measure):
    """RAGAS's context precision@K: the mean of precision@k over the ranks k of the chunks the
    judge calls useful for reaching the reference answer (0 when none is)."""

    NAME = "ContextPrecision"
    NEEDS_CUTOFF = True
    STEPS = frozenset({Step.CONTEXT})

    def evaluate(self, view: StepView) -> float | Unscored:
        if isinstance(view.claims, Unscored):
            return view.claims
        if view.claims.useful is None:
            return Unscored(view.claims.no_reference or "the chunks were not judged")
        useful = view.claims.useful[: self.cutoff]
        if not useful:
            return Unscored("the context holds no chunk")
        hits, total = 0, 0.0
        for k, flag in enumerate(useful, start=1):
            if flag:
                hits += 1
                total += hits / k
        return total / hits if hits else 0.0
