from __future__ import annotations

from collections.abc import Sequence

from cofe.measures._base import Measure, Unscored
from cofe.measures._view import Step, StepView


def supported_share(labels: Sequence[bool | None], what: str) -> float | Unscored:
    if not labels:
        return Unscored("the answer states no claim to check (empty, or a refusal)")
    if any(label is None for label in labels):
        return Unscored(f"the claims were not checked against {what}")
    return sum(bool(label) for label in labels) / len(labels)


class Faithfulness(Measure):
    """Share of the answer's claims supported by the context the generator saw (RAGAS's
    definition: claims extracted from the answer, one verdict per claim against the context)."""

    NAME = "Faithfulness"
    STEPS = frozenset({Step.ANSWER})

    def evaluate(self, view: StepView) -> float | Unscored:
        if isinstance(view.claims, Unscored):
            return view.claims
        return supported_share(view.claims.context, "the context")


def _claims_with_reference(view: StepView):
    if isinstance(view.claims, Unscored):
        return view.claims
    if view.claims.no_reference:
        return Unscored(view.claims.no_reference)
    if not view.claims.context:
        return Unscored("the answer states no claim to check (empty, or a refusal)")
    return view.claims


class Hallucination(Measure):
    """RAGChecker's hallucination: share of the answer's claims that are wrong (the reference
    does not support them) and not in the context either -- invented."""

    NAME = "Hallucination"
    STEPS = frozenset({Step.ANSWER})
    HIGHER_IS_BETTER = False

    def evaluate(self, view: StepView) -> float | Unscored:
        labels = _claims_with_reference(view)
        if isinstance(labels, Unscored):
            return labels
        pairs = list(zip(labels.context, labels.reference, strict=True))
        return sum(not c and not r for c, r in pairs) / len(pairs)


class SelfKnowledge(Measure):
    """RAGChecker's self-knowledge: share of the answer's claims that are right (the reference
    supports them) but not in the context -- from the model's own knowledge."""

    NAME = "SelfKnowledge"
    STEPS = frozenset({Step.ANSWER})

    def evaluate(self, view: StepView) -> float | Unscored:
        labels = _claims_with_reference(view)
        if isinstance(labels, Unscored):
            return labels
        pairs = list(zip(labels.context, labels.reference, strict=True))
        return sum(not c and bool(r) for c, r in pairs) / len(pairs)
