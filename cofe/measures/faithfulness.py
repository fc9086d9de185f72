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
