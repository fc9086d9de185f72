"""Generation stage: does the answer convey each information point?

Per point, the strongest evidence decides, and the rule that decided is kept:

1. *verbatim* -- every keyword found as written (the rule chunks are judged by);
2. *paraphrase* -- ``cofe.matching.AnswerMatcher``: content words, numbers and names
   after normalisation; present, absent, partial or undecided;
3. the LLM judge's label (``cofe judge``: support / partial / not_support), when the sample
   was judged -- it settles every point not shown present by 1 or 2, overriding the
   matcher's absent, partial or undecided (a present point never needs a call).

With ``answer_match="verbatim"`` step 2 is skipped: a point not found verbatim is absent
unless the judge says otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cofe.matching import (
    AnswerMatcher,
    CompiledSample,
    Decision,
    PointDecision,
    Rule,
)
from cofe.stages._context import RunContext
from cofe.stages._evidence import quote
from cofe.stages.parse import judge_text

_VERBATIM = PointDecision(Decision.PRESENT, Rule.VERBATIM, "every keyword found as written")
_JUDGED = {
    "support": Decision.PRESENT,
    "partial": Decision.PARTIAL,
    "not_support": Decision.ABSENT,
}
_NOT_WRITTEN = PointDecision(Decision.ABSENT, Rule.VERBATIM, "not found as written")
# an answer made of its context's (or source's) own sentences did not paraphrase: what it
# lacks as written, it lacks (as for chunks, which copy their document)
_COPIED = PointDecision(
    Decision.ABSENT,
    Rule.VERBATIM,
    "the answer copies its context or source sentence for sentence: no paraphrase to look for",
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


def copies(ctx: RunContext, answer: str, texts: Sequence[str], normalized: str = "") -> bool:
    """Whether every sentence of the answer is written, as is, in one of the (normalised)
    texts: an extractive generator, or an LLM quoting its context. ``normalized``: the whole
    answer already normalised (used as is when the answer is one sentence)."""
    if not texts:
        return False
    parts = _SENTENCE_END.split(answer.strip())
    if len(parts) == 1 and normalized:
        sentences = [normalized] if normalized.strip() else []
    else:
        sentences = [s for s in map(ctx.normalize, parts) if s.strip()]
    return bool(sentences) and all(any(s in text for text in texts) for s in sentences)


@dataclass(frozen=True, slots=True)
class AnswerHits:
    """Per point: found verbatim (the lexical ``KeywordRecall``) and the decision that counts."""

    verbatim: tuple[bool, ...]
    missing: tuple[tuple[str, ...], ...]  # per point: keywords not found as written
    decisions: tuple[PointDecision, ...]

    @property
    def ranks(self) -> tuple[int | None, ...]:
        return tuple(1 if hit else None for hit in self.verbatim)

    @property
    def conveyed(self) -> tuple[bool | None, ...]:
        """Per point: conveyed whole (True), not (False), or undecided (None)."""
        return tuple(d.decision.conveyed for d in self.decisions)

    def why(self, p: int) -> str:
        decision = self.decisions[p]
        if not self.missing[p]:
            return decision.why
        lacks = f"the answer lacks {quote(self.missing[p])}"
        return lacks if decision is _NOT_WRITTEN else f"{lacks} as written; {decision.why}"


def judge_answer(
    ctx: RunContext,
    cs: CompiledSample,
    answer: str,
    question: str,
    judged: tuple[str | None, ...] = (),
    quotable: Callable[[], Sequence[str]] = tuple,
    declines: str | None = None,
) -> AnswerHits:
    """``judged``: the LLM judge's label per fine_keywords index (empty: not judged);
    ``quotable``: the normalised texts the answer may have copied (its context's chunks,
    its source document), asked for only when a point is not found as written; ``declines``:
    why the answer is a refusal (it conveys nothing it does not state as written)."""
    normalized = ctx.normalize(answer)
    written = judge_text(ctx, cs, answer, normalized)  # the verbatim rule
    paraphrase = ctx.config.answer_match == "paraphrase"
    copied: bool | None = None  # the answer copies its context: decided on first need
    decisions = []
    matcher: AnswerMatcher | None = None
    for point, absent in zip(cs.points, written.missing, strict=True):
        label = judged[point.index] if point.index < len(judged) else None
        if not absent:
            decision = _VERBATIM
        elif not paraphrase:
            decision = _NOT_WRITTEN
        elif declines is not None:
            decision = PointDecision(
                Decision.ABSENT, Rule.VERBATIM, f"the answer declines: {declines}"
            )
        else:
            if copied is None:  # decided once per answer, only when a point needs it
                copied = copies(ctx, answer, quotable(), normalized)
            if copied:
                decision = _COPIED
            else:
                matcher = matcher or AnswerMatcher(answer, question)
                decision = matcher.point(point.texts)
        if label is not None and decision.decision is not Decision.PRESENT:
            # the judge settles what the words could not show conveyed (a present point
            # never needs a call, and a weak judge cannot talk it away)
            decision = PointDecision(
                _JUDGED[label], Rule.JUDGE, f"the LLM judge labelled it {label}"
            )
        decisions.append(decision)
    return AnswerHits(written.hits, written.missing, tuple(decisions))
