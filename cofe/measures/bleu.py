from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from cofe.measures._base import Measure, register
from cofe.measures._unscored import Unscored
from cofe.measures._view import Step, StepView

_EPSILON = 0.1  # "method1" smoothing: a zero n-gram match counts as 0.1 matches


def _ngrams(tokens: Sequence[str], n: int) -> Counter[str] | Counter[tuple[str, ...]]:
    if n == 1:  # the tokens themselves: no 1-tuples to build
        return Counter(tokens)
    return Counter(zip(*(tokens[i:] for i in range(n)), strict=False))


def sentence_bleu4(answer: Sequence[str], reference: Sequence[str]) -> float:
    """Sentence BLEU-4 with uniform weights, brevity penalty and method-1 smoothing.

    Gives the same value as ``nltk.translate.bleu_score.sentence_bleu`` with
    ``SmoothingFunction().method1`` (checked in the tests) at a fraction of the cost.
    """
    hyp = len(answer)
    if not hyp:
        return 0.0
    log_sum = 0.0
    matched = 1
    for n in range(1, 5):
        total = hyp - n + 1  # n-grams in the answer
        if total <= 0:
            log_sum += 0.25 * math.log(_EPSILON)  # no n-gram at all: counted as 0 of 1
            continue
        if matched:  # no n-gram matched: no longer one can (skip the counting)
            ref: Counter[Any] = _ngrams(reference, n)
            matched = 0
            for gram, count in _ngrams(answer, n).items():
                times = ref.get(gram)
                if times:
                    matched += count if count < times else times
            if n == 1 and matched == 0:
                return 0.0
        log_sum += 0.25 * math.log((matched if matched else _EPSILON) / total)
    ref_len = len(reference)
    penalty = 1.0 if hyp > ref_len else math.exp(1 - ref_len / hyp)
    return penalty * math.exp(log_sum)


@register
class BLEU(Measure):
    """Sentence BLEU-4 (smoothed) of the answer against the reference, on strict tokens."""

    NAME = "BLEU"
    STEPS = frozenset({Step.ANSWER})

    def compute(self, answer: Sequence[str], reference: Sequence[str]) -> float | Unscored:
        if not reference:
            return Unscored("the reference answer has no words")
        return sentence_bleu4(answer, reference)

    def evaluate(self, view: StepView) -> float | Unscored:
        if view.reference is None:
            return Unscored("no reference answer")
        return self.compute(view.tokens(), view.reference)
