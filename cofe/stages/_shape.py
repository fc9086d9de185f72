"""What a run's shape allows to be measured, decided once per run.

A run without parsed documents (or whose documents were only rebuilt from its chunks:
they hold what the chunks hold) has no parse step; a pipeline without a
reranker has no reranking measures; a run that never says how many chunks the
generator received cannot be judged at the context. Every measure planned
here gets, for every sample, a value or an ``Unscored`` reason -- so each
measure of a step has the same denominator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cofe._errors import InputError, InputProblem
from cofe.chain import STEP_SPECS
from cofe.config import ScoreConfig
from cofe.measures import OWN, Cutoff, Measure, Need, Step, parse_measures
from cofe.runlog import MORE_FIELDS, RecordFacts, RunLog, Stage
from cofe.runlog import reorders as reorders  # its old home

MORE_STEPS: dict[str, Step] = {
    spec.field: spec.step for spec in STEP_SPECS if spec.field in dict(MORE_FIELDS)
}
"""The steps read generically (``cofe.chain``: beyond the pool, the context and the answer),
by their ``SampleRecord`` field."""


@dataclass(frozen=True)
class RunShape:
    """The stages a run has and the cutoffs its measures use."""

    has_docs: bool
    has_chunks: bool
    has_pool: bool
    reranker: bool  # a reranking stage sits between the pool and the context
    generation: bool
    pool_cutoff: int
    top_k: int | None  # how many chunks the generator received; None: unknown
    top_k_from: str  # where top_k came from, or why it is unknown
    feeds_context: bool  # something downstream of retrieval consumes a context
    judged: bool = False  # `cofe judge` stored claim labels for this run
    # why the chunks are not the whole corpus (None: they are): the corpus step is not judged
    corpus_unjudged: str | None = None
    # the steps read generically (``MORE_STEPS``) some record of the run has
    more: frozenset[Step] = frozenset()
    # (sample id, line) of records in samples.jsonl that were invalid: those samples are
    # unscorable for that, not for want of an answer
    invalid_records: tuple[tuple[str, int], ...] = ()

    @classmethod
    def from_facts(cls, run: RunLog, config: ScoreConfig, facts: RecordFacts) -> RunShape:
        """The shape from what the records hold, gathered in one pass (the streaming scorer
        never holds them all)."""
        stages = getattr(run.manifest, "stages", None)
        has_pool, has_context = facts.has_pool, facts.has_context
        if stages is not None:
            reranker = Stage.RERANKING in stages
            generation = Stage.GENERATION in stages
            # a retrieval-only pipeline hands its pool to nobody: its @K is a pool measure
            feeds_context = reranker or generation or has_context
        else:  # the run does not say (an older run, a framework recorded from its spans):
            # a recorded context next to a pool is a reranker's output -- unless every
            # context is its pool's first items, a top-K cut with no reranker
            reranker = has_pool and has_context and facts.reordered
            generation = facts.generated
            feeds_context = True
        longest_context = facts.longest_context
        manifest_k = getattr(run.manifest, "top_k", None)
        if config.top_k is not None:
            top_k, source = config.top_k, "--top-k"
        elif manifest_k is not None:
            top_k, source = manifest_k, "the run's manifest (top_k)"
        elif longest_context:
            top_k, source = longest_context, "the longest recorded context"
        else:
            top_k, source = (
                None,
                (
                    "the run does not record what the generator saw (no context and no top_k "
                    "in its manifest); pass --top-k if you know it"
                ),
            )
        longest_pool = facts.longest_pool
        pool_cutoff = config.candidates or longest_pool or top_k or 1
        partial = (
            "the run's chunks are only those the pipeline returned, not the whole corpus "
            '(manifest "corpus": "partial")'
            if getattr(run.manifest, "corpus", "whole") == "partial" and run.chunks
            else None
        )
        return cls(
            corpus_unjudged=partial,
            # documents rebuilt from the chunks hold what the chunks hold: no parse step
            has_docs=any(not d.meta.get("rebuilt_from_chunks") for d in run.documents.values()),
            has_chunks=bool(run.chunks),
            has_pool=has_pool,
            reranker=reranker,
            generation=generation,
            pool_cutoff=pool_cutoff,
            top_k=top_k,
            top_k_from=source,
            feeds_context=feeds_context,
            more=frozenset(MORE_STEPS[name] for name in facts.more),
        )

    @property
    def has_context(self) -> bool:
        if not self.feeds_context:
            return False
        return self.has_pool or self.reranker or self.top_k is not None

    def context_stage(self, pool_judged: bool) -> Stage:
        """Who is blamed for a loss at the context: the reranker, if the run has one and its
        input (the pool) was recorded; else the retriever (never a reranker that is not there)."""
        return Stage.RERANKING if self.reranker and pool_judged else Stage.RETRIEVAL

    def plan(self, measures: str | None = None) -> dict[Step, tuple[Measure, ...]]:
        """The measures of each step this run allows, in report order; ``measures``
        (``ScoreConfig.measures``): only those, each where this run allows its kind. Every
        step the run has stays in the plan (its verdicts do not depend on the measures)."""
        allowed = self._allowed()
        if measures is None:
            return allowed
        chosen: dict[Step, list[Measure]] = {step: [] for step in allowed}
        for step, measure in parse_measures(measures):
            # without a step: every step of its kind; a cutoff only where there is a ranking
            steps = (
                [step]
                if step is not None
                else [
                    s
                    for s in allowed
                    if s in measure.STEPS and (measure.cutoff is None or s in _RANKED)
                ]
            )
            usable = [s for s in steps if s in allowed and self._takes(s, allowed[s], measure)]
            if not usable:
                where = ", ".join(s.value for s in steps) or "no step"
                raise InputError(
                    InputProblem(
                        "--measures",
                        None,
                        measure.name,
                        f"this run cannot measure {measure.name} at {where} (it has "
                        f"{', '.join(s.value for s in allowed) or 'no step'}; "
                        f"what needs a reranker, a judged run or a known top-K needs it here too)",
                    )
                )
            for s in usable:
                if measure not in chosen[s]:
                    chosen[s].append(measure)
        return {step: tuple(ms) for step, ms in chosen.items()}

    def _allowed(self) -> dict[Step, tuple[Measure, ...]]:
        """Every measure this run allows at each of its steps, in report order: cofe's own
        (``OWN``), then others' that every scoring takes (``DEFAULT``) -- each read from
        what the measure declares (its steps, ``TAKEN_AT``, ``NEEDS``, ``CUTOFF``)."""
        kinds = [*OWN, *(k for k in Measure.REGISTRY.values() if k.DEFAULT and k not in BUILT_IN)]
        return {step: self._planned(step, kinds) for step in self._steps()}

    def _steps(self) -> list[Step]:
        """The steps this run has, in chain order."""
        has = {
            Step.PARSE: self.has_docs,
            Step.CORPUS: self.has_chunks,
            Step.POOL: self.has_pool,
            Step.CONTEXT: self.has_context,
            Step.ANSWER: self.generation,
        }
        return [step for step in Step if has.get(step, False) or step in self.more]

    def _planned(self, step: Step, kinds: Sequence[type[Measure]]) -> tuple[Measure, ...]:
        """The measures of ``kinds`` this run takes at ``step``. Consecutive kinds read at
        each cutoff (``Cutoff.EACH``) are listed cutoff by cutoff (KeywordRecall@30,
        KeywordAccuracy@30, KeywordRecall@5, KeywordAccuracy@5)."""
        out: list[Measure] = []
        each: list[type[Measure]] = []

        def flush() -> None:
            for cutoff in self._each_cutoff(step):
                out.extend(kind(cutoff) for kind in each)
            each.clear()

        for kind in kinds:
            if step not in kind.taken_at() or not self._meets(kind, step):
                continue
            rule = kind.cutoff_rule()
            if rule is Cutoff.EACH:
                each.append(kind)
                continue
            flush()
            if rule is Cutoff.NONE:
                out.append(kind())
            elif (cutoff := self._top_k_cutoff(step)) is not None:
                out.append(kind(cutoff))
        flush()
        return tuple(out)

    def _each_cutoff(self, step: Step) -> list[int | None]:
        k, n = self.top_k, self.pool_cutoff
        if step is Step.POOL:
            return list(dict.fromkeys([n, *([k] if k else [])]))
        return [k] if step is Step.CONTEXT else [None]

    def _top_k_cutoff(self, step: Step) -> int | None:
        """The cutoff of a top-K measure here: top-K (the pool: else its own); None: none."""
        if step is Step.POOL:
            return self.top_k or self.pool_cutoff
        return self.top_k if step is Step.CONTEXT else None

    def _meets(self, kind: type[Measure], step: Step) -> bool:
        """The step is one of the measure's and the run has what it declares it needs."""
        needs = kind.NEEDS
        return (
            step in kind.STEPS
            and (Need.RERANKER not in needs or (self.reranker and self.has_pool))
            and (Need.JUDGED not in needs or self.judged)
            and (Need.TOP_K not in needs or self.top_k is not None)
        )

    def _takes(self, step: Step, allowed: tuple[Measure, ...], measure: Measure) -> bool:
        """Whether a measure asked for by name is taken at a step whose full plan is
        ``allowed``: cofe's own where the plan has its kind (at any cutoff), another's where
        its declared needs are met (a cutoff only at a ranked step)."""
        if type(measure) in BUILT_IN:
            return _kind_at(allowed, measure)
        return self._meets(type(measure), step) and (measure.cutoff is None or step in _RANKED)


_RANKED = (Step.POOL, Step.CONTEXT)


def _kind_at(allowed: tuple[Measure, ...], measure: Measure) -> bool:
    """A measure is allowed where the run's full plan has its kind (at any cutoff): that
    plan already says what each kind needs (a reranker, the judge's labels, a top-K)."""
    return any(type(m) is type(measure) for m in allowed)


BUILT_IN: frozenset[type[Measure]] = frozenset(OWN)
"""cofe's own measures (``cofe.measures.OWN``)."""
