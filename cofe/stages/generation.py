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
    DecidedBy,
    Decision,
    PointDecision,
)
from cofe.refusal import Decline, Extent, undeclined
from cofe.stages._context import RunContext
from cofe.stages._evidence import quote
from cofe.stages.parse import judge_text

_VERBATIM = PointDecision(Decision.PRESENT, DecidedBy.VERBATIM, "every keyword found as written")
_JUDGED = {
    "support": Decision.PRESENT,
    "partial": Decision.PARTIAL,
    "not_support": Decision.ABSENT,
}
_NOT_WRITTEN = PointDecision(Decision.ABSENT, DecidedBy.VERBATIM, "not found as written")
# an answer made of its context's (or source's) own sentences did not paraphrase: what it
# lacks as written, it lacks (as for chunks, which copy their document)
_COPIED = PointDecision(
    Decision.ABSENT,
    DecidedBy.VERBATIM,
    "the answer copies its context or source sentence for sentence: no paraphrase to look for",
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")
# an answer shorter than this (words, or characters for Chinese) is not read as a copy of its
# context: "Worldvision" is in the context, and conveys "Worldvision Enterprises" or not
_COPY_WORDS, _COPY_CHARS = 4, 12


def copies(ctx: RunContext, answer: str, texts: Sequence[str], normalized: str = "") -> bool:
    """Whether every sentence of the answer is written, as is, in one of the (normalised)
    texts: an extractive generator, or an LLM quoting its context. ``normalized``: the whole
    answer already normalised (used as is when the answer is one sentence)."""
    if not texts or (len(answer.split()) < _COPY_WORDS and len(answer.strip()) < _COPY_CHARS):
        return False  # a word or a name found in the context is no sentence copied from it
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
    # why the answer is a refusal whole, once the points are read (None: it is not)
    refusal: str | None = None

    @property
    def declined(self) -> tuple[bool, ...]:
        """Per point: the answer declines to give it (a refusal, whole or partial)."""
        return tuple(d.decision is Decision.DECLINED for d in self.decisions)

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
    declines: Decline | None = None,
) -> AnswerHits:
    """``judged``: the LLM judge's label per fine_keywords index (empty: not judged);
    ``quotable``: the normalised texts the answer may have copied (its context's chunks,
    its source document), asked for only when a point is not found as written; ``declines``:
    the answer's first decline (``cofe.refusal.read_decline``), read against the points here:
    a whole refusal conveys nothing it does not state as written; a partial one declines the
    points it lacks without stating another value for them, and is a refusal whole when it
    conveys no point and states no figure of its own; one that answers anyway is an answer."""
    normalized = ctx.normalize(answer)
    written = judge_text(ctx, cs, answer, normalized)  # the verbatim rule
    paraphrase = ctx.config.answer_match == "paraphrase"
    copied: bool | None = None  # the answer copies its context: decided on first need
    whole = declines is not None and declines.extent is Extent.WHOLE
    # a partial decline: a figure the answer then states in no form was declined
    declining = declines is not None and declines.extent is Extent.PARTIAL
    decisions = []
    matcher: AnswerMatcher | None = None
    for point, absent in zip(cs.points, written.missing, strict=True):
        if not absent:
            decision = _VERBATIM
        elif not paraphrase:
            decision = _NOT_WRITTEN
        elif whole:
            assert declines is not None
            decision = _declined(declines)
        else:
            if copied is None:  # decided once per answer, only when a point needs it
                copied = copies(ctx, answer, quotable(), normalized)
            if copied:
                decision = _COPIED
            else:
                matcher = matcher or AnswerMatcher(answer, question, declining=declining)
                decision = matcher.point(point.texts)
        decisions.append(decision)
    refusal = declines.reason if whole and declines is not None else None
    if declines is not None and declines.extent is Extent.PARTIAL and paraphrase:
        decisions, refusal = _partly_declined(
            decisions, declines, question, lambda: AnswerMatcher(undeclined(answer), question), cs
        )
    for at, point in enumerate(cs.points):
        label = judged[point.index] if point.index < len(judged) else None
        if label is not None and decisions[at].decision is not Decision.PRESENT:
            # the judge settles what the words could not show conveyed (a present point
            # never needs a call, and a weak judge cannot talk it away)
            decisions[at] = PointDecision(
                _JUDGED[label], DecidedBy.JUDGE, f"the LLM judge labelled it {label}"
            )
    return AnswerHits(written.hits, written.missing, tuple(decisions), refusal)


def _declined(declines: Decline) -> PointDecision:
    return PointDecision(
        Decision.DECLINED, DecidedBy.REFUSAL, f"the answer declines [{declines.reason}]"
    )


def _partly_declined(
    decisions: list[PointDecision],
    declines: Decline,
    question: str,
    besides: Callable[[], AnswerMatcher],
    cs: CompiledSample,
) -> tuple[list[PointDecision], str | None]:
    """A decline among other sentences, read with the points: a point the answer lacks
    (absent, and no other value of it stated) is declined, and so is one it names only in
    the sentences that decline ("does not say how long episodes ran": undecided on the whole
    answer, absent from what it says besides declining, ``besides``). When the answer then
    conveys no point and its other sentences state no figure the question does not hold, it
    is a refusal whole (a preamble restating the question, then the decline); so is one
    that declines every point and either shows its working -- figures read from the
    context -- and then concludes by declining (nothing but declines and explanations after
    the decline), or opens with the decline and then says what the context holds instead."""
    rest: AnswerMatcher | None = None
    out = list(decisions)
    for at, d in enumerate(decisions):
        if d.decision is Decision.ABSENT and not _contradicts(d):
            out[at] = _declined(declines)
        elif d.decision is Decision.UNDECIDED or (declines.opens and _contradicts(d)):
            # read again without the sentences that decline or explain: a value "in the
            # point's place" that only they state ("The table only shows 2018, $4.1m") is
            # what the context holds instead, said to explain the decline -- not an answer
            rest = rest or besides()
            again = rest.point(cs.points[at].texts)
            if again.decision is Decision.ABSENT and not _contradicts(again):
                out[at] = _declined(declines)
    conveyed = any(d.decision in (Decision.PRESENT, Decision.PARTIAL) for d in out)
    asked = set(_FIGURE.findall(question))
    own_figures = any(set(_FIGURE.findall(s)) - asked for s in declines.others)
    declined_all = all(d.decision is Decision.DECLINED for d in out)
    # working shown, then a concluding decline; or a decline that opens the answer and then
    # says what the context holds instead ("It only shows fees paid to the auditor, $86,000
    # in 2018"): figures of its own that convey or contradict no point do not answer it
    explained = declined_all and (declines.concludes or declines.opens)
    whole = not conveyed and (not own_figures or explained) and not any(map(_contradicts, out))
    if whole:  # a refusal repeats the question's words: what stays open is declined too
        out = [_declined(declines) if d.decision is Decision.UNDECIDED else d for d in out]
    return out, declines.reason if whole else None


# the matcher's rules that find another value stated in the point's place
_STATED_OTHERWISE = frozenset(("other-value", "figure-missing", "conclusion"))


def _contradicts(decision: PointDecision) -> bool:
    """The matcher found another value of the point stated: an answer, not a decline."""
    return decision.decision is Decision.ABSENT and not _STATED_OTHERWISE.isdisjoint(decision.rules)
