"""Score samples of a recorded run stage by stage and give each a verdict.

Per sample: the run's shape decides which measures apply (``_shape``), the
stage judges find each information point (``parse``, ``chunking``,
``ranking``, ``generation``), the measures read the judged facts through a
``StepView``, and ``diagnose`` turns the per-step outcomes into a verdict.
A batch of samples is scored in slices (``score_samples``) into compact
``Tables``, which ``batch_result`` turns into columns (``ScoredRows``: no pandas); the one
driver that reads a run and its eval set a batch at a time is ``_stream``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from cofe._errors import InputProblem
from cofe._parallel import fork_imap
from cofe.chain import POINT_COLUMNS, STAGE_ORDER, STEP_SPECS, STEP_STAGE, StepSpec
from cofe.diagnose import LOSS_VERDICT, StageOutcome, Verdict, diagnose
from cofe.evalset import EvalSample, EvalSet
from cofe.matching import BadLabel, CompiledSample, strict_tokens
from cofe.measures import NOT_JUDGED, ClaimLabels, Step, StepView, Unscored
from cofe.measures.point_recall import settled_share
from cofe.refusal import Decline, Extent, read_decline
from cofe.results import Coded, Rows, ScoredRows
from cofe.runlog import ChunkRef, CompactRecord, RunLog, Stage
from cofe.stages._context import RunContext, Scope, Source
from cofe.stages._evidence import corpus_why, quote, ranked_why
from cofe.stages._judgements import CorpusHits, RankedHits
from cofe.stages._shape import RunShape
from cofe.stages._tables import Tables
from cofe.stages.chunking import judge_chunking, split_points, split_why
from cofe.stages.parse import judge_parse, judge_text
from cofe.stages.ranking import judge_ranked

T = TypeVar("T")
_Reach = tuple[RankedHits, Sequence[ChunkRef], str]
"""The last ranked list judged for a sample (its hits, its items, "context" or "pool")."""
_Judge = Callable[["_SampleScorer", StepSpec], StageOutcome | None]
"""How the scorer judges one step of one sample (``_JUDGES``, ``_READERS``)."""


class _SampleScorer:
    """Scores one sample into the shared tables."""

    def __init__(self, ctx: RunContext, shape: RunShape, tables: Tables) -> None:
        self.ctx, self.shape, self.t = ctx, shape, tables
        self._invalid: dict[str, int] | None = None  # sample id -> invalid record's line
        self.plan = shape.plan(ctx.config.measures)
        self.n, self.k = shape.pool_cutoff, shape.top_k
        # per step, each planned measure with its row key: built once, read for every sample
        self._planned = {
            step: [(measure.evaluate, (step.value, measure.name)) for measure in measures]
            for step, measures in self.plan.items()
        }
        # the steps this run has, in chain order, each with its judge: its own (``_JUDGES``)
        # or the generic reader of what it holds (``_READERS``)
        self._judges = [
            (_JUDGES.get(spec.step) or _READERS[spec.reads], spec)
            for spec in STEP_SPECS
            if spec.step in self.plan and spec.reads is not None
        ]

    # --- rows -----------------------------------------------------------------------------

    def measure(self, view: StepView) -> None:
        """One score row per planned measure of the view's step (or a skipped row saying why).

        The hottest loop of scoring: LongForm.add inlined, the keys built once per slice."""
        scores, skipped = self.t.scores, self.t.skipped
        keys, index = scores.keys, self._index
        for evaluate, key in self._planned.get(view.step, ()):
            value = evaluate(view)
            if value.__class__ is Unscored:
                skipped.append((self._sid, self._qtype, *key, value.reason))
                continue
            code = keys.get(key)
            if code is None:
                code = keys[key] = len(keys)
            scores.sample.append(index)
            scores.key.append(code)
            scores.value.append(value)  # type: ignore[arg-type]

    def unjudged(self, step: Step, reason: str) -> StageOutcome | None:
        """Every planned measure of a step this sample cannot be judged at, with the reason."""
        if step not in self.plan:
            return None
        for measure in self.plan[step]:
            self.t.skipped.append((self._sid, self._qtype, step.value, measure.name, reason))
        stage = STEP_STAGE.get(step) or self.shape.context_stage(self.shape.has_pool)
        return StageOutcome(step, stage, None, unjudged=reason)

    def _verdict(
        self,
        sample: EvalSample,
        verdict: Verdict,
        stage: Stage | None,
        text: str,
        points: int,
        record: CompactRecord | None,
        refusal: str | None,
    ) -> None:
        self.t.verdicts.append(
            (
                sample.id,
                sample.query_type.value,
                verdict.value,
                stage.value if stage else None,
                points,
                text,
                sample.source.doc if sample.source else None,
                None if record is None else record.answer is not None,
                refusal,
            )
        )

    def _refusal(
        self, sample: EvalSample, record: CompactRecord | None, decline: Decline | None = None
    ) -> str | None:
        """Why the answer is a refusal whole: the refusal rules (``cofe.refusal``; a partial
        decline is settled by the answer step against the points), else the judge's labels."""
        if record is None or record.answer is None:
            return None
        if decline is None:
            decline = read_decline(record.answer)
        reason = decline.reason if decline and decline.extent is Extent.WHOLE else None
        if reason is None:
            claims = self.ctx.claims.get(sample.id)
            reason = claims.refusal() if isinstance(claims, ClaimLabels) else None
        return reason

    def _no_record(self, sample: EvalSample) -> str:
        """Why a sample has no record: its record was invalid (named in the problems), or
        the pipeline did not answer it."""
        if self._invalid is None:
            self._invalid = dict(self.shape.invalid_records)
        line = self._invalid.get(sample.id)
        if line is not None:
            return (
                f"its record in samples.jsonl (line {line}) is invalid, as the problems say: "
                "not scored"
            )
        return "no record in samples.jsonl: the pipeline did not answer it"

    # --- one sample -----------------------------------------------------------------------

    def score(self, index: int, sample: EvalSample, record: CompactRecord | None) -> None:
        self._sid, self._qtype, self._index = sample.id, sample.query_type.value, index
        cs = self.ctx.compiled[sample.id]
        reason = cs.unscorable or (None if record is not None else self._no_record(sample))
        if reason is not None:
            for step in self.plan:
                self.unjudged(step, reason)
            self._verdict(
                sample,
                Verdict.UNSCORABLE,
                None,
                reason,
                len(cs.points),
                record,
                self._refusal(sample, record),
            )
            return
        assert record is not None
        source = self.ctx.source(sample)
        if source.problem:
            self.t.problems.append((sample.id, "source.doc", source.problem))
        scope = self.ctx.scope(sample, cs, source)
        if (
            cs.coarse
            and not scope.mentions_coarse
            and self.ctx.config.scope.value != "off"
            and self.shape.has_chunks  # without a corpus one run-level problem says it all
        ):
            self.t.problems.append(
                (
                    sample.id,
                    "coarse_keywords",
                    f"{quote(cs.coarse_keywords)} is named in no chunk of the run; "
                    + (
                        "only its source document is in scope"
                        if scope.docs
                        else "scored without the coarse filter"
                    ),
                )
            )
        # what the steps' judges share for this sample
        self._sample, self._cs, self._outputs = sample, cs, record
        self._source, self._scope = source, scope
        self._fates: dict[str, Sequence[Any]] = {}
        self._corpus: CorpusHits | None = None  # the corpus, when judged
        self._judged_pool: RankedHits | None = None  # the pool, when judged
        self._reach: _Reach | None = None
        reference = sample.reference_answer
        # tokenised only if a measure reads it (a long reference costs a regex pass)
        self._reference = _once(lambda: strict_tokens(reference) if reference else None)
        answered = record.answer
        self._decline = read_decline(answered) if answered is not None else None
        self._refused = self._refusal(sample, record, self._decline)
        outcomes: list[StageOutcome | None] = []
        self._outcomes = outcomes
        for judge, spec in self._judges:  # the chain, step by step
            outcomes.append(judge(self, spec))
        self._split(cs, scope, self._corpus, self._reach, outcomes)
        self._record(
            sample, cs, record, [o for o in outcomes if o is not None], self._fates, self._refused
        )

    def _crashed(self, record: CompactRecord, stage: Stage) -> str | None:
        """Why a stage produced nothing: it, or a stage before it, raised."""
        error = record.error
        if error is not None and STAGE_ORDER[stage] >= STAGE_ORDER[error.stage]:
            return f"the pipeline's {error.stage} stage raised {error.type}"
        return None

    # --- the judges of the steps (``_JUDGES``, ``_READERS``) -------------------------------

    def _parse(self, spec: StepSpec) -> StageOutcome | None:
        cs, source = self._cs, self._source
        parse = judge_parse(self.ctx, cs, source, self._scope)
        if isinstance(parse, Unscored):
            return self.unjudged(Step.PARSE, parse.reason)
        self.measure(StepView(Step.PARSE, parse.ranks))
        where = (
            f"the parsed text of {source.doc!r}" if source.doc else "any parsed document in scope"
        )
        self._fates["parse"] = parse.hits
        return StageOutcome(
            Step.PARSE,
            Stage.PARSE,
            parse.hits,
            lambda p: f"{quote(parse.missing[p])} not in {where}",
        )

    def _chunking(self, spec: StepSpec) -> StageOutcome | None:
        if self.shape.corpus_unjudged:
            return self.unjudged(Step.CORPUS, self.shape.corpus_unjudged)
        cs = self._cs
        corpus = judge_chunking(self.ctx, cs, self._scope, self._source)
        self.measure(
            StepView(
                Step.CORPUS,
                _found(corpus.hits),
                intact=corpus.intact,
                anchored=corpus.anchored,
                has_coarse=bool(cs.coarse),
            )
        )
        self._corpus = corpus
        self._fates.update(
            corpus=corpus.hits,
            intact=corpus.intact,
            anchored=corpus.anchored,
            cut_keywords=[" | ".join(cut) or None for cut in corpus.cut],
            dropped_keywords=[" | ".join(d) or None for d in corpus.dropped],
        )
        return StageOutcome(
            Step.CORPUS,
            Stage.CHUNKING,
            corpus.hits,
            corpus_why(corpus),
            corpus.kinds.__getitem__,
        )

    def _ranked(
        self,
        step: Step,
        sample: EvalSample,
        cs: CompiledSample,
        items: Sequence[ChunkRef],
        scope: Scope,
        source: Source,
        pool: RankedHits | None = None,
    ) -> RankedHits | str:
        """Judge a ranked list and emit its measures; a reason instead when it cannot be judged."""
        hits = judge_ranked(self.ctx, cs, items, scope)
        if hits.unknown_chunks:
            shown = ", ".join(map(repr, hits.unknown_chunks[:3]))
            reason = (
                f"{len(hits.unknown_chunks)} chunk id(s) not in the run's corpus "
                f"(chunks.jsonl): {shown}"
            )
            self.unjudged(step, reason)
            return reason
        relevant: frozenset[str] | Unscored
        if source.doc is not None:
            relevant = frozenset([source.doc])
        else:
            relevant = Unscored(source.problem or "the sample names no source document")
        self.measure(
            StepView(
                step,
                hits.point_ranks,
                doc_ids=hits.doc_ids,
                mentions_coarse=hits.mentions_coarse,
                has_coarse=bool(cs.coarse),
                relevant=relevant,
                relevant_in_corpus=len(self.ctx.doc_units.get(source.doc, ())) if source.doc else 0,
                pool_ranks=pool.point_ranks
                if pool is not None
                else Unscored("the record has no pool"),
                reference_tokens=self._reference,
                tokens=_once(lambda: self._tokens(items)),
                claims=self.ctx.claims.get(sample.id, NOT_JUDGED)
                if step is Step.CONTEXT
                else NOT_JUDGED,
            )
        )
        return hits

    def _pool(self, spec: StepSpec) -> StageOutcome | None:
        record, n = self._outputs, self.n
        if record.pool is None:
            reason = self._crashed(record, Stage.RETRIEVAL) or "the record has no pool"
            return self.unjudged(Step.POOL, reason)
        judged = self._ranked(
            Step.POOL, self._sample, self._cs, record.pool, self._scope, self._source
        )
        if isinstance(judged, str):
            return StageOutcome(Step.POOL, Stage.RETRIEVAL, None, unjudged=judged)
        pool = self._judged_pool = judged
        self._fates["pool_rank"] = pool.point_ranks
        self._reach = (pool, record.pool[:n], "pool")  # unless a context is judged
        return StageOutcome(
            Step.POOL,
            Stage.RETRIEVAL,
            _within(pool.point_ranks, n),
            ranked_why(pool, n, "pool", corpus=self._corpus),
            derivation_kind(pool, Verdict.NOT_RETRIEVED),
        )

    def _context(self, spec: StepSpec) -> StageOutcome | None:
        """What the generator received: the last ranked list judged, the context, else the
        pool (``_reach``), is what reached the generator, as far as known."""
        shape, k, record = self.shape, self.k, self._outputs
        pool, corpus = self._judged_pool, self._corpus
        stage = shape.context_stage(pool is not None)
        given = self._given(record)
        if given is None:
            reason = self._crashed(
                record, Stage.RERANKING if shape.reranker else Stage.RETRIEVAL
            ) or (shape.top_k_from if k is None else "the record has no context")
            self.unjudged(Step.CONTEXT, reason)
            return StageOutcome(Step.CONTEXT, stage, None, unjudged=reason)
        judged = self._ranked(
            Step.CONTEXT, self._sample, self._cs, given, self._scope, self._source, pool
        )
        if isinstance(judged, str):
            return StageOutcome(Step.CONTEXT, stage, None, unjudged=judged)
        self._fates["context_rank"] = judged.point_ranks
        self._reach = (judged, given, "context")
        if record.context is None and pool is not None:
            why = ranked_why(pool, len(given), "pool", corpus=corpus)  # the context is its top-K
        else:
            why = ranked_why(
                judged, len(given), "context", pool if stage is Stage.RERANKING else None, corpus
            )
        if any(judged.derivation):  # the evidence of a derivation loss is the context's
            pool_why = why
            context_why = ranked_why(judged, len(given), "context", None, corpus)
            why = lambda p: (context_why if judged.derivation[p] else pool_why)(p)  # noqa: E731
        # a reranker that dropped what its pool held cut it, whatever else it handed on
        before = pool if stage is Stage.RERANKING else None
        hits = tuple(r is not None for r in judged.point_ranks)
        kind = derivation_kind(judged, LOSS_VERDICT[stage], before)
        return StageOutcome(Step.CONTEXT, stage, hits, why, kind)

    def _declared_output(self, spec: StepSpec) -> tuple[Stage, object]:
        """A declared step's stage and what its record field holds (None: nothing)."""
        stage = STEP_STAGE.get(spec.step) or self.shape.context_stage(self._judged_pool is not None)
        return stage, self._outputs.more.get(spec.field or "")

    def _missing_output(self, spec: StepSpec, stage: Stage) -> str:
        return self._crashed(self._outputs, stage) or f"the record has no {spec.field}"

    def _ranked_output(self, spec: StepSpec) -> StageOutcome | None:
        """A step ``cofe.chain`` declares beyond the pool and the context whose record field
        holds chunk ids: a point is held when every keyword is in the list (its whole length);
        its first per-point column gets the rank where the point became complete."""
        step = spec.step
        stage, items = self._declared_output(spec)
        if not isinstance(items, tuple):
            return self.unjudged(step, self._missing_output(spec, stage))
        judged = self._ranked(step, self._sample, self._cs, items, self._scope, self._source)
        if isinstance(judged, str):
            return StageOutcome(step, stage, None, unjudged=judged)
        if spec.columns:
            self._fates[spec.columns[0][0]] = judged.point_ranks
        hits = tuple(r is not None for r in judged.point_ranks)
        why = ranked_why(judged, len(items), step.value, corpus=self._corpus)
        return StageOutcome(step, stage, hits, self._held_before(why))

    def _text_output(self, spec: StepSpec) -> StageOutcome | None:
        """A step ``cofe.chain`` declares beyond the answer whose record field holds a text: a
        point is held when every keyword is in it as written (or ``--fuzzy`` close); its first
        per-point column gets that flag."""
        step = spec.step
        stage, text = self._declared_output(spec)
        if not isinstance(text, str):
            return self.unjudged(step, self._missing_output(spec, stage))
        found = judge_text(self.ctx, self._cs, text)
        self.measure(
            StepView(
                step,
                found.ranks,
                reference_tokens=self._reference,
                tokens=_once(lambda: strict_tokens(text)),
            )
        )
        if spec.columns:
            self._fates[spec.columns[0][0]] = found.hits
        missing = found.missing
        why = lambda p: f"{quote(missing[p])} not in the {step}"  # noqa: E731
        return StageOutcome(step, stage, found.hits, self._held_before(why))

    def _held_before(self, why: Callable[[int], str]) -> Callable[[int], str]:
        """A generic step's evidence, naming the judged step before it that held the point."""
        before = next((o for o in reversed(self._outcomes) if o and o.hits is not None), None)
        if before is None:
            return why
        held, name = before.hits, before.step
        assert held is not None
        return lambda p: f"{why(p)}; the {name} held it" if held[p] else why(p)

    def _split(
        self,
        cs: CompiledSample,
        scope: Scope,
        corpus: CorpusHits | None,
        reach: _Reach | None,
        outcomes: list[StageOutcome | None],
    ) -> None:
        """A point no chunk in scope holds whole that did not reach the context whole either
        is a chunking loss (``chunk_split``): the corpus step loses it, its recall unchanged.
        Read at the context, or at the pool when the context cannot be judged (what the
        pool's cutoff lacks, the context lacks); not at all when neither was judged."""
        if corpus is None or reach is None or all(corpus.intact):
            return
        reached, items, name = reach
        split = split_points(self.ctx, cs, corpus, reached, items)
        if not any(split):
            return
        at = next(i for i, o in enumerate(outcomes) if o is not None and o.step is Step.CORPUS)
        before = outcomes[at]
        assert before is not None
        pieces = split_why(self.ctx, cs, scope, reached, items, name)
        why = lambda p: pieces(p) if split[p] else before.why(p)  # noqa: E731
        kind = lambda p: Verdict.CHUNK_SPLIT if split[p] else before.verdict(p)  # noqa: E731
        outcomes[at] = replace(before, split=split, why=why, kind=kind)

    def _given(self, record: CompactRecord) -> Sequence[ChunkRef] | None:
        """What the generator received, as far as the run says."""
        if record.context is not None:
            return record.context[: self.k] if self.ctx.config.top_k else record.context
        if self.k is not None and not self.shape.reranker and record.pool is not None:
            return record.pool[: self.k]  # no reranker: the generator received the pool's top-K
        return None

    def _quotable(self, sample: EvalSample, record: CompactRecord) -> list[str]:
        """The normalised texts an answer may copy: its context's chunks, its source."""
        ctx = self.ctx
        texts = [
            ctx.chunks.text(ctx.chunk_pos[item.chunk_id])
            for item in self._given(record) or ()
            if item.chunk_id in ctx.chunk_pos
        ]
        source = ctx.source(sample).doc
        if source is not None and source in ctx.doc_pos:
            texts.append(ctx.docs.text(ctx.doc_pos[source]))
        return texts

    def _generation(self, spec: StepSpec) -> StageOutcome | None:
        sample, cs, record, fates = self._sample, self._cs, self._outputs, self._fates
        if record.answer is None:
            reason = self._crashed(record, Stage.GENERATION) or "the record has no answer"
            return self.unjudged(Step.ANSWER, reason)
        # the answer step loads the answer matcher (its rules and tables: a tenth of the
        # scorer's start-up) when a run first has an answer to read, not for every run:
        # a lazy import kept for start-up time
        from cofe.stages.generation import judge_answer

        claims = self.ctx.claims.get(sample.id, NOT_JUDGED)
        judged = claims.points if isinstance(claims, ClaimLabels) else ()
        answer = judge_answer(
            self.ctx,
            cs,
            record.answer,
            sample.query,
            judged,
            lambda: self._quotable(sample, record),
            self._decline,
        )
        if answer.refusal is not None and self._refused is None:
            self._refused = answer.refusal  # a partial decline that conveyed no point
        declined = answer.declined
        text = record.answer
        conveyed = answer.conveyed
        self.measure(
            StepView(
                Step.ANSWER,
                answer.ranks,
                reference_tokens=self._reference,
                tokens=_once(lambda: strict_tokens(text)),
                claims=claims,
                conveyed=conveyed,
            )
        )
        fates["answer"] = answer.verbatim
        fates["answer_decision"] = [d.decision.value for d in answer.decisions]
        fates["answer_rule"] = [d.rule.value for d in answer.decisions]
        return StageOutcome(
            Step.ANSWER,
            Stage.GENERATION,
            tuple(c is not False for c in conveyed),
            answer.why,
            undecided=tuple(c is None for c in conveyed),
            settle="the offline matcher found part of it; `cofe judge` settles it",
            # a point the answer declines (a partial refusal) is the generator's refusal
            kind=(lambda p: Verdict.REFUSED if declined[p] else Verdict.NOT_IN_ANSWER)
            if any(declined)
            else None,
        )

    def _record(
        self,
        sample: EvalSample,
        cs: CompiledSample,
        record: CompactRecord,
        outcomes: list[StageOutcome],
        fates: dict[str, Sequence[Any]],
        refusal: str | None,
    ) -> None:
        """The verdict, the waterfall steps and one row per information point."""
        labels = tuple(point.label for point in cs.points)
        claims = self.ctx.claims.get(sample.id)
        unsupported = claims.unsupported() if isinstance(claims, ClaimLabels) else ()
        diagnosis = diagnose(labels, outcomes, record.error, unsupported, refusal)
        self._verdict(
            sample,
            diagnosis.verdict,
            diagnosis.stage,
            diagnosis.explanation,
            len(cs.points),
            record,
            refusal,
        )
        for outcome in outcomes:
            if outcome.hits is not None:
                recall = _decided_recall(outcome)
                if recall is not None:
                    self.t.recalls.add(self._index, (outcome.step.value,), recall)
                if outcome.step is Step.CORPUS:
                    intact = fates["intact"]
                    self.t.recalls.add(
                        self._index, (Step.CHUNK_INTACT.value,), sum(intact) / len(intact)
                    )
        qtype = sample.query_type.value
        columns = [fates.get(key) for key in FATE_KEYS]
        rows = self.t.points
        for p, point in enumerate(cs.points):
            lost = diagnosis.lost_at[p]
            rows.append(
                (
                    sample.id,
                    qtype,
                    point.index,
                    labels[p],
                    *[None if column is None else column[p] for column in columns],
                    lost.value if lost else None,
                )
            )

    def _tokens(self, given: Sequence[ChunkRef]) -> list[str]:
        """Strict tokens of a list of chunks, for ROUGE, whatever the matching mode."""
        tokens: list[str] = []
        ctx = self.ctx
        for item in given:
            unit = ctx.chunk_pos.get(item.chunk_id)
            if unit is not None:
                tokens += ctx.chunk_tokens(unit)
        return tokens


_JUDGES: dict[Step, _Judge] = {
    Step.PARSE: _SampleScorer._parse,
    Step.CORPUS: _SampleScorer._chunking,
    Step.POOL: _SampleScorer._pool,
    Step.CONTEXT: _SampleScorer._context,
    Step.ANSWER: _SampleScorer._generation,
}
"""The steps with a judge of their own; every other step ``cofe.chain`` declares is judged by
the reader of what it holds (``StepSpec.reads``)."""
_READERS: dict[str, _Judge] = {
    "ranked": _SampleScorer._ranked_output,
    "text": _SampleScorer._text_output,
}

FATE_KEYS = tuple(name for name, _ in POINT_COLUMNS)
"""The points table's per-step columns (``cofe.chain``): what each step's judge found."""


def _once(make: Callable[[], T]) -> Callable[[], T]:
    """A view's tokens, computed on first use and shared by every measure reading them."""
    made: list[T] = []

    def tokens() -> T:
        if not made:
            made.append(make())
        return made[0]

    return tokens


def derivation_kind(
    hits: RankedHits, otherwise: Verdict, before: RankedHits | None = None
) -> Callable[[int], Verdict] | None:
    """The verdict of a point lost at a ranked step: a derivation loss when a derived item in
    the list was built from chunks holding it (and the list before, if any, lacked it)."""
    if not any(hits.derivation):
        return None

    def kind(p: int) -> Verdict:
        held_before = before is not None and before.point_ranks[p] is not None
        return Verdict.DERIVATION_LOST if hits.derivation[p] and not held_before else otherwise

    return kind


def _decided_recall(outcome: StageOutcome) -> float | None:
    """Share of a step's settled points it holds; undecided points are counted apart (None
    when none is settled): an answer the matcher cannot read is not a recall of 0."""
    assert outcome.hits is not None
    if not any(outcome.undecided):
        return sum(outcome.hits) / len(outcome.hits)
    return settled_share(
        [None if open_ else hit for hit, open_ in zip(outcome.hits, outcome.undecided, strict=True)]
    )


def _within(ranks: Sequence[int | None], cutoff: int) -> tuple[bool, ...]:
    return tuple(r is not None and r <= cutoff for r in ranks)


def _found(hits: Sequence[bool]) -> tuple[int | None, ...]:
    return tuple(1 if hit else None for hit in hits)


def label_problems(evals: EvalSet, ctx: RunContext) -> list[InputProblem]:
    """Every bad label, named by eval-set line and field, with what it does to scoring."""
    problems = []
    for sample in evals.samples:
        compiled = ctx.compiled[sample.id]
        for bad in compiled.bad_labels:
            problems.append(
                InputProblem(
                    str(evals.path),
                    evals.lines.get(sample.id),
                    bad.field,
                    f"bad label {bad.keyword!r} in sample {sample.id!r}: {bad.reason}; "
                    + _label_effect(compiled, bad),
                )
            )
    return problems


_POINT = re.compile(r"^fine_keywords\[(\d+)\]")


def _label_effect(compiled: CompiledSample, bad: BadLabel) -> str:
    field = bad.field
    if compiled.unscorable:
        return "the whole sample is unscored"
    if bad.used:
        return "strict mode would not match it"
    if field.startswith("coarse"):
        return "this coarse keyword is not used"
    point = _POINT.match(field)
    if point and any(p.index == int(point[1]) for p in compiled.points):
        if ".any_of[" in field:
            return "this alternative is ignored; the point is scored with its other alternatives"
        return "this keyword is ignored; the point is scored with its other keywords"
    return "its information point is not scored"


def say_indexing(log: RunLog, samples: int) -> None:
    """The corpus pass takes seconds on large runs: say what is happening."""
    print(
        f"indexing {len(log.chunks):,} chunks and {len(log.documents):,} documents for "
        f"the keywords of {samples:,} samples ...",
        file=sys.stderr,
        flush=True,
    )


def no_chunks_problem(log: RunLog, shape: RunShape) -> list[InputProblem]:
    if log.chunks or not (shape.has_pool or shape.has_context):
        return []
    return [
        InputProblem(
            str(log.path / "chunks.jsonl"),
            None,
            None,
            "the run records no chunks (file missing or empty): its pools and contexts "
            "name chunks whose text is unknown, so retrieval, reranking and chunking are "
            "unscored for every sample (not counted as misses)",
        )
    ]


def table_problems(tables: Tables, evals: EvalSet) -> list[InputProblem]:
    return [
        InputProblem(
            str(evals.path), evals.lines.get(sample_id), field, f"sample {sample_id!r}: {message}"
        )
        for sample_id, field, message in tables.problems
    ]


def unknown_record(log: RunLog, sample_id: str) -> InputProblem:
    return InputProblem(
        str(log.path / "samples.jsonl"),
        None,
        "sample_id",
        f"{sample_id!r} is not in the eval set; ignored",
    )


def run_shape(shape: RunShape, *, records: int, errors: dict[str, int]) -> dict[str, Any]:
    """What the results say of the run's shape (``ScoreResult.shape``, ``summary.json``)."""
    return {
        "stages": [s.value for s in _stages(shape)],
        "pool_cutoff": shape.pool_cutoff,
        "top_k": shape.top_k,
        "top_k_from": shape.top_k_from,
        "records": records,
        "errors_by_stage": errors,
    }


def batch_result(
    evals: EvalSet, tables: Tables, bounds: tuple[int, int] | None = None
) -> ScoredRows:
    """The tables of the samples ``bounds`` (a slice: all by default) of a batch, scored, as
    columns ready for a sink."""
    start, stop = bounds or (0, len(evals.samples))
    samples = evals.samples[start:stop]
    by_sample = {  # each sample's id, and its query type (a few, each written once)
        "sample_id": Coded.of([s.id for s in samples]),
        "query_type": Coded.of([s.query_type.value for s in samples]),
    }
    return ScoredRows(
        scores=tables.scores.rows("scores", by_sample, ["step", "measure"], first=start),
        points=Rows.of_tuples(
            "points",
            tables.points,
            ["sample_id", "query_type", "point", "keywords", *FATE_KEYS, "lost_at"],
        ),
        verdicts=Rows.of_tuples(
            "verdicts",
            tables.verdicts,
            [
                "sample_id",
                "query_type",
                "verdict",
                "stage",
                "points",
                "explanation",
                "source",
                "answered",
                "refusal",
            ],
        ),
        skipped=Rows.of_tuples(
            "skipped", tables.skipped, ["sample_id", "query_type", "step", "measure", "reason"]
        ),
        recalls=tables.recalls.rows("recalls", by_sample, ["step"], first=start),
    )


def _stages(shape: RunShape) -> list[Stage]:
    stages = []
    if shape.has_docs:
        stages.append(Stage.PARSE)
    if shape.has_chunks and not shape.corpus_unjudged:
        stages.append(Stage.CHUNKING)
    if shape.has_pool or shape.has_context:
        stages.append(Stage.RETRIEVAL)
    if shape.reranker:
        stages.append(Stage.RERANKING)
    if shape.generation:
        stages.append(Stage.GENERATION)
    if shape.more:  # the stages of steps read generically (cofe.chain) the run records
        stages += [STEP_STAGE[step] for step in shape.more if step in STEP_STAGE]
        stages = sorted(dict.fromkeys(stages), key=STAGE_ORDER.__getitem__)
    return stages


_SLICE = 2_000  # samples per task: small enough for a smooth progress bar
PARALLEL_FROM = 8_000  # below this, starting processes costs more than it saves


def _score_slice(
    state: tuple[RunContext, RunShape, list[EvalSample], Mapping[str, CompactRecord]],
    bounds: tuple[int, int],
) -> Tables:
    ctx, shape, samples, records = state
    tables = Tables()
    scorer = _SampleScorer(ctx, shape, tables)
    for index in range(*bounds):
        sample = samples[index]
        scorer.score(index, sample, records.get(sample.id))
    return tables


def score_samples(
    ctx: RunContext,
    shape: RunShape,
    samples: list[EvalSample],
    records: Mapping[str, CompactRecord],
    workers: int,
    on_done: Callable[[tuple[int, int]], None] | None = None,
    cluster: Any = None,
) -> Iterator[tuple[tuple[int, int], Tables]]:
    """Score samples in slices, each slice's bounds and tables handed back in order as soon
    as it is done: in forked worker processes when it pays (the caller writes one slice
    while they score the next), or as tasks on a Dask cluster (the shared state sent to each
    worker once); ``on_done`` hears of each slice."""
    state = (ctx, shape, samples, records)
    if cluster is not None:
        from cofe._distributed import dask_map

        parts = dask_map(
            _score_slice, state, len(samples), slice_size=_SLICE, client=cluster, on_done=on_done
        )
        starts = range(0, len(samples), _SLICE)
        for start, part in zip(starts, parts, strict=True):
            yield (start, min(start + _SLICE, len(samples))), part
        return
    yield from fork_imap(
        _score_slice, state, len(samples), slice_size=_SLICE, workers=workers, on_done=on_done
    )


def latency_seconds(records: Iterable[CompactRecord]) -> dict[str, list[float]]:
    seconds: dict[str, list[float]] = {}
    for record in records:
        for stage, value in record.latency.items():
            seconds.setdefault(stage.value, []).append(value)
    return seconds
