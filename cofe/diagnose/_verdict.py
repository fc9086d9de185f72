"""Per-sample verdicts: the first stage that lost an information point, with evidence.

A verdict is a (stage, code) pair: the stage blamed and what kind of loss it
was, so one stage can lose information in several ways (a chunk boundary cut
the point, or the chunker dropped the text). Passes say how far the sample was
judged: ``pass`` only when the answer was judged and holds every point.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum

from cofe.chain import STAGE_ORDER, STAGE_SPECS, STEP_ORDER, STEP_SPECS
from cofe.measures import Step
from cofe.runlog import Stage, StageError


class Verdict(StrEnum):
    PARSE_LOST = "parse_lost"
    # a chunk boundary cut the point: a keyword in no chunk, or its keywords in different
    # chunks only (no chunk holds the point whole) and it did not reach the context whole
    CHUNK_SPLIT = "chunk_split"
    CHUNK_DROPPED = "chunk_dropped"  # the chunker left the text out of every chunk
    # only chunks that do not name the entity hold it (cofe-rag's coarse scope): chunking
    # parted the fact from the name that finds it -- no boundary cut the keyword
    CHUNK_UNANCHORED = "chunk_unanchored"
    NOT_IN_CORPUS = "not_in_corpus"  # in no chunk; no parsed text recorded to say which stage
    NOT_RETRIEVED = "not_retrieved"
    # a derived item (summary, entity, relation) was handed on whose sources hold the point
    # but whose own text dropped it: lost when the item was built, not by the search
    DERIVATION_LOST = "derivation_lost"
    CUT_BY_RERANK = "cut_by_rerank"
    REFUSED = "refused"  # the answer declines (cofe.diagnose.refusal_reason, or the judge)
    NOT_IN_ANSWER = "not_in_answer"
    UNSUPPORTED_CLAIMS = "unsupported_claims"  # every point in the answer, but so are inventions
    PASS = "pass"  # the answer was judged and holds every point
    PASS_TO_CONTEXT = (
        "pass_to_context"  # every point reached the context; the answer was not judged
    )
    PASS_TO_POOL = "pass_to_pool"
    PASS_TO_CORPUS = "pass_to_corpus"
    PASS_TO_PARSE = "pass_to_parse"
    PIPELINE_ERROR = "pipeline_error"
    UNSCORABLE = "unscorable"

    @property
    def stage(self) -> Stage | None:
        """The stage a loss verdict blames (None for passes, errors and unscorable)."""
        return _BLAMED.get(self)

    @property
    def is_pass(self) -> bool:
        return self in _PASSES


# what each verdict blames and which verdict a loss or a pass is: read from the chain's
# declarations (cofe.chain), never spelled out here again
_BLAMED = {Verdict(code): spec.stage for spec in STAGE_SPECS for code in spec.losses}
PASS_AT = {spec.step: Verdict(spec.passes) for spec in STEP_SPECS if spec.passes is not None}
_PASSES = frozenset(PASS_AT.values())
LOSS_VERDICT = {spec.stage: Verdict(spec.loss) for spec in STAGE_SPECS}
_ORDER = list(Verdict)
# Verdict lists the declared verdicts in the chain's order -- every loss, stage by stage; every
# pass, the deepest first -- then the two that blame no step: a new stage's verdicts go where
# its declarations put them (the first of several kinds of loss at one stage wins)
assert list(Verdict) == [
    *(Verdict(code) for spec in STAGE_SPECS for code in spec.losses),
    *reversed(PASS_AT.values()),
    Verdict.PIPELINE_ERROR,
    Verdict.UNSCORABLE,
], (
    "Verdict's members must follow cofe.chain's STAGE_SPECS (losses) and STEP_SPECS (passes, reversed)"
)


@dataclass(frozen=True, slots=True)
class StageOutcome:
    """One step of one sample, judged (``hits``) or not (``unjudged`` says why).

    ``stage`` is the stage blamed for a loss at this step (the context is the
    reranker's output, or the retriever's when there is no reranker);
    ``kind`` gives the verdict of a lost point (default: the stage's loss verdict).
    """

    step: Step
    stage: Stage
    hits: tuple[bool, ...] | None
    why: Callable[[int], str] = lambda p: ""
    kind: Callable[[int], Verdict] | None = None
    unjudged: str | None = None
    # per point: judged but not settled (the answer's matcher could not tell); such a point
    # counts as held (``hits`` True) and is never blamed, and no pass reaches past this step
    undecided: tuple[bool, ...] = ()
    settle: str = ""  # how to settle an undecided point
    # per point: found here only in pieces (no single item holds it whole) and no later step
    # held it whole either: lost at this step (``kind`` says how), though ``hits`` still
    # counts it found -- the recalls are about keywords, the verdict about usable points
    split: tuple[bool, ...] = ()

    def verdict(self, point: int) -> Verdict:
        return self.kind(point) if self.kind else LOSS_VERDICT[self.stage]

    def lost(self, point: int) -> bool:
        """This judged step lost the point: not found, or found only in pieces."""
        return not self.hits[point] or bool(self.split and self.split[point])  # type: ignore[index]


@dataclass(frozen=True, slots=True)
class Diagnosis:
    verdict: Verdict
    stage: Stage | None
    explanation: str
    lost_at: tuple[Stage | None, ...]  # per point: the stage blamed where it was first absent


def diagnose(
    point_labels: tuple[str, ...],
    outcomes: list[StageOutcome],
    error: StageError | None,
    unsupported: tuple[str, ...] = (),
    refusal: str | None = None,
) -> Diagnosis:
    """Walk the steps in pipeline order; the verdict is the earliest step losing any point.

    A step that could not be judged for this sample (unknown chunk ids, a source
    naming no document, a stage that raised) before the first loss makes the
    verdict ``unscorable``: the loss may have begun there. An answer holding
    every point but also claims that neither the context nor the source supports
    (``unsupported``, from the LLM judge) is ``unsupported_claims``, not ``pass``:
    lost information comes first, invented information second. An answer that declines
    (``refusal``: why) is ``refused`` whenever the verdict would be the generator's or a
    pass: the generator declined though the context held the points (over-cautious); a loss
    before it still comes first, and its explanation says the generator declined rightly.
    """
    found = _diagnose(point_labels, outcomes, error, unsupported)
    generators = found.stage is Stage.GENERATION and found.verdict is not Verdict.PIPELINE_ERROR
    if refusal is not None and found.stage is not None and not generators:
        # declined what never reached it: the stage that lost the point is to blame, and
        # the generator behaved (a team fixes retrieval, not the prompt)
        return replace(
            found,
            explanation=f"{found.explanation}; the answer declines ({refusal}): rightly, "
            f"the point never reached the context",
        )
    if refusal is None or not (found.verdict.is_pass or generators):
        return found
    lost = f"; {found.explanation}" if found.stage is Stage.GENERATION else ""
    return Diagnosis(
        Verdict.REFUSED, Stage.GENERATION, f"the answer declines: {refusal}{lost}", found.lost_at
    )


def _diagnose(
    point_labels: tuple[str, ...],
    outcomes: list[StageOutcome],
    error: StageError | None,
    unsupported: tuple[str, ...],
) -> Diagnosis:
    outcomes = sorted(outcomes, key=lambda outcome: STEP_ORDER[outcome.step])
    judged = [o for o in outcomes if o.hits is not None]
    first: list[StageOutcome | None] = [
        next((o for o in judged if o.lost(p)), None) for p in range(len(point_labels))
    ]
    lost_at = tuple(o.stage if o else None for o in first)
    losing = [o for o in first if o is not None]
    first_loss = min(losing, key=lambda o: STEP_ORDER[o.step]) if losing else None
    if error is not None and (
        first_loss is None or STAGE_ORDER[error.stage] <= STAGE_ORDER[first_loss.stage]
    ):
        return Diagnosis(
            Verdict.PIPELINE_ERROR,
            error.stage,
            f"{error.stage} raised {error.type}: {error.message}",
            lost_at,
        )
    horizon = STEP_ORDER[first_loss.step] if first_loss else len(STEP_ORDER)
    blind = [o for o in outcomes if o.hits is None and STEP_ORDER[o.step] < horizon]
    if first_loss is not None:
        # a step that could not be judged cannot be where a point was lost if a judged step
        # after it still held that point (the pool held it: the corpus had it)
        lost_first = [p for p, o in enumerate(first) if o is first_loss]
        blind = [
            b
            for b in blind
            if any(
                not any(
                    o.hits[p]  # type: ignore[index]
                    for o in judged
                    if STEP_ORDER[b.step] < STEP_ORDER[o.step] < horizon
                )
                for p in lost_first
            )
        ]
    if first_loss is None:
        if not judged:
            reasons = "; ".join(f"{o.step}: {o.unjudged}" for o in blind) or "nothing was judged"
            return Diagnosis(Verdict.UNSCORABLE, None, reasons, lost_at)
        last = judged[-1]
        if unsupported and last.step is Step.ANSWER:
            shown = "; ".join(repr(c) for c in unsupported[:3])
            more = f" (and {len(unsupported) - 3} more)" if len(unsupported) > 3 else ""
            return Diagnosis(
                Verdict.UNSUPPORTED_CLAIMS,
                Stage.GENERATION,
                f"every information point reached the answer, but it states "
                f"{len(unsupported)} claim(s) supported neither by the context nor by the "
                f"source: {shown}{more}",
                lost_at,
            )
        if any(last.undecided):
            return _undecided(point_labels, judged, blind, last)
        verdict = PASS_AT[last.step]
        text = f"every information point reached the {last.step}"
        later = [o for o in blind if STEP_ORDER[o.step] > STEP_ORDER[last.step]]
        if later:
            text += "; not judged after it: " + "; ".join(f"{o.step}: {o.unjudged}" for o in later)
        return Diagnosis(verdict, None, text, lost_at)
    if blind:
        reasons = "; ".join(f"{o.step}: {o.unjudged}" for o in blind)
        return Diagnosis(
            Verdict.UNSCORABLE,
            None,
            f"a point is missing at the {first_loss.step} but an earlier step could not be "
            f"judged ({reasons}), so the loss may have begun there",
            lost_at,
        )
    lost_here = [p for p, o in enumerate(first) if o is first_loss]
    # several kinds of loss at one stage (a cut and dropped text): the first in Verdict order
    verdict = min((first_loss.verdict(p) for p in lost_here), key=_ORDER.index)
    details = [f"point {p} [{point_labels[p]}]: {first_loss.why(p)}" for p in lost_here]
    return Diagnosis(verdict, first_loss.stage, "; ".join(details), lost_at)


def _undecided(
    point_labels: tuple[str, ...],
    judged: list[StageOutcome],
    blind: list[StageOutcome],
    last: StageOutcome,
) -> Diagnosis:
    """No point lost, but the last step could not settle some: the pass ends one step before
    it, and the explanation says which points are open and how to settle them."""
    open_points = [p for p, flag in enumerate(last.undecided) if flag]
    shown = "; ".join(f"point {p} [{point_labels[p]}]: {last.why(p)}" for p in open_points)
    earlier = [o for o in judged if o is not last]
    settle = f" ({last.settle})" if last.settle else ""
    text = f"the {last.step} step is undecided for {len(open_points)} point(s){settle}: {shown}"
    if not earlier:
        return Diagnosis(Verdict.UNSCORABLE, None, text, tuple(None for _ in point_labels))
    before = earlier[-1]
    reached = f"every information point reached the {before.step}; "
    later = [o for o in blind if STEP_ORDER[o.step] > STEP_ORDER[before.step] and o is not last]
    if later:
        text += "; not judged: " + "; ".join(f"{o.step}: {o.unjudged}" for o in later)
    return Diagnosis(PASS_AT[before.step], None, reached + text, tuple(None for _ in point_labels))
