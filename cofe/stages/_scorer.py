"""Score a recorded run stage by stage and give each sample a verdict."""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from cofe._errors import InputError, InputProblem
from cofe._parallel import default_workers, fork_map
from cofe.diagnose import StageOutcome, Step, Verdict, diagnose
from cofe.evalset import EvalSample, EvalSet, QueryType, file_sha256, read_evalset
from cofe.matching import CompiledSample, MatchMode, strict_tokens
from cofe.measures import (
    BLEU,
    NDCG,
    ChunkIntegrity,
    CoarsePrecision,
    DocPrecision,
    DocRecall,
    KeywordAccuracy,
    KeywordRecall,
    Measure,
    RerankGain,
    RerankLoss,
    RougeL,
    RougeLRecall,
    Unscored,
)
from cofe.runlog import RankedChunk, RunLog, SampleRecord, Stage, read_run
from cofe.stages._config import ScoreConfig
from cofe.stages._context import RunContext, Scope
from cofe.stages._judgements import CorpusHits, RankedHits
from cofe.stages._result import ScoreResult
from cofe.stages.chunking import judge_chunking
from cofe.stages.generation import judge_answer
from cofe.stages.parse import judge_parse
from cofe.stages.ranking import judge_ranked


class _LongForm:
    """Rows of (sample index, key, value) in typed arrays.

    Millions of score rows are cheap to append, to send back from a worker
    process (arrays pickle as bytes) and to turn into DataFrame columns.
    """

    def __init__(self) -> None:
        self.sample = array("q")
        self.key = array("q")
        self.value = array("d")
        self.keys: dict[tuple[str, ...], int] = {}

    def add(self, sample: int, key: tuple[str, ...], value: float) -> None:
        code = self.keys.get(key)
        if code is None:
            code = self.keys[key] = len(self.keys)
        self.sample.append(sample)
        self.key.append(code)
        self.value.append(value)

    def extend(self, other: _LongForm) -> None:
        # the other table numbered its keys in its own order (dicts keep insertion order)
        remap = np.array(
            [self.keys.setdefault(k, len(self.keys)) for k in other.keys], dtype=np.int64
        )
        self.sample.extend(other.sample)
        if other.key:
            self.key.frombytes(remap[np.frombuffer(other.key, dtype=np.int64)].tobytes())
        self.value.extend(other.value)

    def frame(
        self, samples: list[EvalSample], key_columns: list[str], value_column: str
    ) -> pd.DataFrame:
        index = (
            np.frombuffer(self.sample, dtype=np.int64)
            if self.sample
            else np.zeros(0, dtype=np.int64)
        )
        codes = np.frombuffer(self.key, dtype=np.int64) if self.key else np.zeros(0, dtype=np.int64)
        ids = np.array([s.id for s in samples], dtype=object)
        types = np.array([s.query_type.value for s in samples], dtype=object)
        ordered = sorted(self.keys, key=self.keys.__getitem__)
        columns: dict[str, object] = {"sample_id": ids[index], "query_type": types[index]}
        for position, name in enumerate(key_columns):
            values = np.array([key[position] for key in ordered], dtype=object)
            columns[name] = values[codes] if len(ordered) else np.zeros(0, dtype=object)
        columns[value_column] = (
            np.frombuffer(self.value, dtype=np.float64) if self.value else np.zeros(0)
        )
        return pd.DataFrame(columns)


@dataclass
class _Tables:
    """Everything scoring produces, turned into DataFrames once at the end."""

    scores: _LongForm = field(default_factory=_LongForm)
    recalls: _LongForm = field(default_factory=_LongForm)
    points: list[tuple] = field(default_factory=list)
    verdicts: list[dict] = field(default_factory=list)
    skipped: list[tuple] = field(default_factory=list)

    def extend(self, other: _Tables) -> None:
        self.scores.extend(other.scores)
        self.recalls.extend(other.recalls)
        self.points.extend(other.points)
        self.verdicts.extend(other.verdicts)
        self.skipped.extend(other.skipped)


@dataclass
class _Judged:
    """What the stage judges found for one sample, gathered for the verdict and the tables."""

    outcomes: list[StageOutcome] = field(default_factory=list)
    steps: dict[Step, tuple[bool, ...]] = field(default_factory=dict)  # waterfall
    fates: dict[str, list] = field(default_factory=dict)  # per point, by points.csv column

    def add(self, stage: Stage, hits: tuple[bool, ...], why: Callable[[int], str]) -> None:
        self.outcomes.append(StageOutcome(stage, hits, why))


class _SampleScorer:
    """Scores one sample into the shared tables."""

    def __init__(self, ctx: RunContext, tables: _Tables, pool_cutoff: int) -> None:
        self.ctx, self.t = ctx, tables
        self.n, self.k = pool_cutoff, ctx.config.top_k

    def emit(self, stage: Stage, measure: Measure, value: float | Unscored) -> None:
        """One score row for the current sample (or a skipped row saying why)."""
        if value.__class__ is Unscored:
            self.t.skipped.append((self._sid, _TEXT[stage], measure.name, value.reason))  # type: ignore[union-attr]
            return
        scores = self.t.scores  # the hottest line of scoring: _LongForm.add, inlined
        key = (_TEXT[stage], measure.name)
        code = scores.keys.get(key)
        if code is None:
            code = scores.keys[key] = len(scores.keys)
        scores.sample.append(self._index)
        scores.key.append(code)
        scores.value.append(value)  # type: ignore[arg-type]

    def skip(self, stage: Stage, measures: list[Measure], reason: str) -> None:
        for measure in measures:
            self.t.skipped.append((self._sid, _TEXT[stage], measure.name, reason))

    def unscorable(self, sample: EvalSample, reason: str) -> None:
        self.t.verdicts.append(_verdict_row(sample, Verdict.UNSCORABLE, None, reason))

    def chunk_tokens(self, unit: int) -> list[str]:
        """Strict tokens of a chunk, for ROUGE, whatever the matching mode."""
        if self.ctx.config.mode is MatchMode.STRICT:
            return self.ctx.chunks.text(unit).split()  # the strict normal form is its tokens
        return strict_tokens(self.ctx.chunks.raw(unit))

    def score(self, index: int, sample: EvalSample, record: SampleRecord | None) -> None:
        self._sid, self._qtype, self._index = sample.id, _TEXT[sample.query_type], index
        cs = self.ctx.compiled[sample.id]
        if cs.unscorable:
            return self.unscorable(sample, cs.unscorable)
        if record is None:
            return self.unscorable(
                sample, "no record in samples.jsonl: the pipeline did not answer it"
            )
        source_doc = self.ctx.resolve_doc(sample.source.doc) if sample.source else None
        scope = self.ctx.scope(cs, source_doc)
        judged = _Judged()
        self._parse(cs, source_doc, judged)
        corpus = self._chunking(cs, scope, source_doc, judged)
        given = self._ranking(sample, cs, record, scope, source_doc, corpus, judged)
        reference = strict_tokens(sample.reference_answer) if sample.reference_answer else None
        if given is not None:
            chunks, stage = given
            if reference is None:
                self.skip(stage, [_m(RougeLRecall, self.k)], "no reference answer")
            else:
                coverage = _m(RougeLRecall, self.k).compute(self._context_tokens(chunks), reference)
                self.emit(stage, _m(RougeLRecall, self.k), coverage)
        self._generation(cs, record, reference, judged)
        self._record(sample, cs, record, judged)
        return None

    def _parse(self, cs: CompiledSample, source_doc: str | None, judged: _Judged) -> None:
        parse = judge_parse(self.ctx, cs, source_doc)
        if isinstance(parse, Unscored):
            self.emit(Stage.PARSE, _m(KeywordRecall), parse)
            return
        self.emit(Stage.PARSE, _m(KeywordRecall), _m(KeywordRecall).compute(parse.ranks))
        where = f"the parsed text of {source_doc!r}" if source_doc else "any parsed document"
        judged.add(Stage.PARSE, parse.hits, lambda p: f"{_quote(parse.missing[p])} not in {where}")
        judged.steps[Step.PARSE] = parse.hits
        judged.fates["parse"] = list(parse.hits)

    def _chunking(
        self, cs: CompiledSample, scope: Scope, source_doc: str | None, judged: _Judged
    ) -> CorpusHits | None:
        if len(self.ctx.chunks) == 0:
            self.skip(
                Stage.CHUNKING, [_m(KeywordRecall), _m(ChunkIntegrity)], "the run log has no chunks"
            )
            return None
        corpus = judge_chunking(self.ctx, cs, scope, source_doc)
        self.emit(Stage.CHUNKING, _m(KeywordRecall), _m(KeywordRecall).compute(_ranks(corpus.hits)))
        self.emit(Stage.CHUNKING, _m(ChunkIntegrity), _m(ChunkIntegrity).compute(corpus.intact))

        def why(p: int) -> str:
            pairs = zip(corpus.missing[p], corpus.why_missing[p], strict=True)
            return "; ".join(f"{_quote((m,))} {reason}" for m, reason in pairs)

        judged.add(Stage.CHUNKING, corpus.hits, why)
        judged.steps[Step.CORPUS] = corpus.hits
        judged.steps[Step.CHUNK_INTACT] = corpus.intact
        judged.fates["corpus"], judged.fates["intact"] = list(corpus.hits), list(corpus.intact)
        judged.fates["cut_keywords"] = [" | ".join(cut) or None for cut in corpus.cut]
        return corpus

    def _ranking(
        self,
        sample: EvalSample,
        cs: CompiledSample,
        record: SampleRecord,
        scope: Scope,
        source_doc: str | None,
        corpus: CorpusHits | None,
        judged: _Judged,
    ) -> tuple[list[RankedChunk], Stage] | None:
        """Judge the pool and the context; return what the generator saw, and whose it was."""
        ctx, n, k = self.ctx, self.n, self.k
        pool = None
        if record.pool is not None:
            pool = judge_ranked(ctx, cs, record.pool, scope)
            self._ranked_measures(sample, Stage.RETRIEVAL, cs, pool, source_doc, cutoffs=(n, k))
            self._unknown(record, pool)
            judged.fates["pool_rank"] = list(pool.point_ranks)
            judged.steps[Step.POOL] = _within(pool.point_ranks, n)
        if record.context is None and pool is None:
            self.skip(
                Stage.RETRIEVAL, [_m(KeywordRecall, k)], "the record has neither pool nor context"
            )
            return None
        if record.context is None:
            # no reranker: the generator saw the pool's top-K, so a loss below K is retrieval's
            assert pool is not None and record.pool is not None
            in_top = _within(pool.point_ranks, k)
            judged.add(Stage.RETRIEVAL, in_top, _ranked_why(pool, k, "pool top-K", corpus=corpus))
            judged.steps[Step.CONTEXT] = in_top
            return record.pool[:k], Stage.RETRIEVAL
        context = judge_ranked(ctx, cs, record.context, scope)
        self._ranked_measures(sample, Stage.RERANKING, cs, context, source_doc, cutoffs=(k,))
        self._unknown(record, context)
        judged.fates["context_rank"] = list(context.point_ranks)
        if pool is not None:
            for measure in (_m(RerankLoss, k), _m(RerankGain, k)):
                self.emit(
                    Stage.RERANKING, measure, measure.compute(pool.point_ranks, context.point_ranks)
                )
            judged.add(
                Stage.RETRIEVAL,
                _within(pool.point_ranks, n),
                _ranked_why(pool, n, "pool", corpus=corpus),
            )
        in_context = _within(context.point_ranks, k)
        judged.add(Stage.RERANKING, in_context, _ranked_why(context, k, "context", pool))
        judged.steps[Step.CONTEXT] = in_context
        return record.context[:k], Stage.RERANKING

    def _generation(
        self, cs: CompiledSample, record: SampleRecord, reference: list[str] | None, judged: _Judged
    ) -> None:
        if record.answer is None:
            if record.error is None:
                self.skip(
                    Stage.GENERATION,
                    [_m(KeywordRecall)],
                    "the record has no answer (generation not run)",
                )
            return
        answer = judge_answer(self.ctx, cs, record.answer)
        self.emit(Stage.GENERATION, _m(KeywordRecall), _m(KeywordRecall).compute(answer.ranks))
        judged.add(
            Stage.GENERATION, answer.hits, lambda p: f"the answer lacks {_quote(answer.missing[p])}"
        )
        judged.steps[Step.ANSWER] = answer.hits
        judged.fates["answer"] = list(answer.hits)
        if reference is None:
            self.skip(Stage.GENERATION, [_m(BLEU), _m(RougeL)], "no reference answer")
            return
        tokens = strict_tokens(record.answer)
        for measure in (_m(BLEU), _m(RougeL)):
            self.emit(Stage.GENERATION, measure, measure.compute(tokens, reference))

    def _record(
        self, sample: EvalSample, cs: CompiledSample, record: SampleRecord, judged: _Judged
    ) -> None:
        """The verdict, the waterfall steps and one row per information point."""
        labels = tuple(point.label for point in cs.points)
        diagnosis = diagnose(labels, judged.outcomes, record.error)
        self.t.verdicts.append(
            _verdict_row(
                sample, diagnosis.verdict, diagnosis.stage, diagnosis.explanation, len(cs.points)
            )
        )
        for step, hits in judged.steps.items():
            self.t.recalls.add(self._index, (_TEXT[step],), sum(hits) / len(hits))
        fates = judged.fates
        for p, point in enumerate(cs.points):
            lost = diagnosis.lost_at[p]
            self.t.points.append(
                (
                    sample.id,
                    self._qtype,
                    point.index,
                    labels[p],
                    *(fates[key][p] if key in fates else None for key in _FATE_KEYS),
                    lost.value if lost else None,
                )
            )

    def _ranked_measures(
        self,
        sample: EvalSample,
        stage: Stage,
        cs: CompiledSample,
        hits: RankedHits,
        source_doc: str | None,
        cutoffs: tuple[int, ...],
    ) -> None:
        ranks = hits.point_ranks
        for cutoff in dict.fromkeys(cutoffs):
            self.emit(stage, _m(KeywordRecall, cutoff), _m(KeywordRecall, cutoff).compute(ranks))
            self.emit(
                stage, _m(KeywordAccuracy, cutoff), _m(KeywordAccuracy, cutoff).compute(ranks)
            )
        k = self.k
        if cs.coarse:
            self.emit(
                stage, _m(CoarsePrecision, k), _m(CoarsePrecision, k).compute(hits.mentions_coarse)
            )
        else:
            self.skip(stage, [_m(CoarsePrecision, k)], "the sample has no usable coarse keyword")
        doc_measures = [_m(DocRecall, k), _m(DocPrecision, k), _m(NDCG, k)]
        if sample.source is None:
            self.skip(stage, doc_measures, "the sample names no source document")
        elif source_doc is None:
            self.skip(
                stage,
                doc_measures,
                f"source {sample.source.doc!r} matches no document of the run",
            )
        else:
            relevant = {source_doc}
            self.emit(stage, _m(DocRecall, k), _m(DocRecall, k).compute(hits.doc_ids, relevant))
            self.emit(
                stage, _m(DocPrecision, k), _m(DocPrecision, k).compute(hits.doc_ids, relevant)
            )
            in_corpus = len(self.ctx.doc_units.get(source_doc, ()))
            self.emit(stage, _m(NDCG, k), _m(NDCG, k).compute(hits.doc_ids, relevant, in_corpus))

    def _context_tokens(self, given: list[RankedChunk]) -> list[str]:
        tokens: list[str] = []
        for item in given:
            unit = self.ctx.chunk_pos.get(item.chunk_id)
            if unit is not None:
                tokens.extend(self.chunk_tokens(unit))
        return tokens

    def _unknown(self, record: SampleRecord, hits: RankedHits) -> None:
        if hits.unknown_chunks:
            shown = ", ".join(map(repr, hits.unknown_chunks[:3]))
            self.t.skipped.append(
                (
                    record.sample_id,
                    "run log",
                    "chunk ids",
                    f"{len(hits.unknown_chunks)} chunk id(s) not in chunks.jsonl, ignored: {shown}",
                )
            )


@cache
def _m(kind: type[Measure], cutoff: int | None = None) -> Measure:
    """Each measure value is built once: the scorer asks for them millions of times."""
    return kind(cutoff)


_TEXT = {member: member.value for enum in (Stage, QueryType, Step) for member in enum}
_FATE_KEYS = ("parse", "corpus", "intact", "cut_keywords", "pool_rank", "context_rank", "answer")
# nullable types: a stage that was not judged is <NA>, never a float NaN posing as a rank
_FATE_TYPES = {
    "parse": "boolean",
    "corpus": "boolean",
    "intact": "boolean",
    "pool_rank": "Int64",
    "context_rank": "Int64",
    "answer": "boolean",
}


def _within(ranks: tuple[int | None, ...], cutoff: int) -> tuple[bool, ...]:
    return tuple(r is not None and r <= cutoff for r in ranks)


def _ranks(hits: tuple[bool, ...]) -> tuple[int | None, ...]:
    return tuple(1 if hit else None for hit in hits)


def _quote(keywords: tuple[str, ...]) -> str:
    return ", ".join(repr(k) for k in keywords)


def _ranked_why(
    hits: RankedHits,
    cutoff: int,
    name: str,
    pool: RankedHits | None = None,
    corpus: CorpusHits | None = None,
) -> Callable[[int], str]:
    def why(p: int) -> str:
        rank, missing = hits.point_ranks[p], hits.missing[p]
        if missing:
            reason = f"{_quote(missing)} not in the {name} ({len(hits.doc_ids)} chunk(s))"
            if corpus is not None and corpus.example_chunk[p] is not None:
                reason += f"; chunk {corpus.example_chunk[p]!r} holds the whole point"
        else:
            reason = f"complete only at {name} rank {rank}, below the cutoff {cutoff}"
        if pool is not None and pool.point_ranks[p] is not None:
            reason = f"complete at pool rank {pool.point_ranks[p]}, but {reason}"
        return reason

    return why


def _verdict_row(
    sample: EvalSample, verdict: Verdict, stage: Stage | None, explanation: str, points: int = 0
) -> dict:
    return {
        "sample_id": sample.id,
        "query_type": sample.query_type.value,
        "verdict": verdict.value,
        "stage": stage.value if stage else None,
        "points": points,
        "explanation": explanation,
    }


def _load_evalset(run: RunLog, evalset: str | os.PathLike[str] | EvalSet | None) -> EvalSet:
    if isinstance(evalset, EvalSet):
        return evalset
    path = Path(evalset) if evalset is not None else run.evalset_path
    if not path.exists():
        raise InputError(
            InputProblem(str(path), None, None, "eval set not found (pass --evalset FILE)")
        )
    loaded = read_evalset(path)
    if not loaded.samples:
        loaded.problems.append(
            InputProblem(str(path), None, None, "the eval set holds no sample: nothing to score")
        )
    expected = run.manifest.evalset_sha256
    if expected and file_sha256(path) != expected:
        loaded.problems.append(
            InputProblem(
                str(path),
                None,
                None,
                "this eval set differs from the one the run answered (manifest evalset_sha256); scores may not mean what you think",
            )
        )
    return loaded


def score_run(
    run: str | os.PathLike[str] | RunLog,
    evalset: str | os.PathLike[str] | EvalSet | None = None,
    config: ScoreConfig | None = None,
    *,
    progress: bool = False,
    workers: int | None = None,
) -> ScoreResult:
    """Score every stage of a recorded run against the eval set's keywords.

    Bad records never stop scoring: they are listed in ``result.problems`` and
    the samples they concern are marked unscorable with the reason. ``workers``
    processes score slices of the samples (default: one per core for large runs).
    """
    config = config or ScoreConfig()
    log = run if isinstance(run, RunLog) else read_run(run)
    evals = _load_evalset(log, evalset)
    problems = [*log.problems, *evals.problems]
    if workers is None:
        workers = default_workers(len(evals.samples), _PARALLEL_FROM)
    ctx = RunContext(log, evals.samples, config, workers=workers)
    for sample in evals.samples:
        line = evals.lines.get(sample.id)
        for bad in ctx.compiled[sample.id].bad_labels:
            problems.append(
                InputProblem(
                    str(evals.path),
                    line,
                    bad.field,
                    f"bad label {bad.keyword!r} in sample {sample.id!r}: {bad.reason}; its information point is not scored",
                )
            )
    pool_cutoff = config.candidates or max(
        (len(r.pool) for r in log.records.values() if r.pool), default=config.top_k
    )
    tables = _score_samples(ctx, evals.samples, log.records, pool_cutoff, workers, progress)
    known = evals.by_id()
    for sample_id in log.records:
        if sample_id not in known:
            problems.append(
                InputProblem(
                    str(log.path / "samples.jsonl"),
                    None,
                    "sample_id",
                    f"{sample_id!r} is not in the eval set; ignored",
                )
            )
    return ScoreResult(
        config=config,
        run=str(log.path),
        run_id=log.manifest.run_id,
        scores=tables.scores.frame(evals.samples, ["stage", "measure"], "value"),
        points=_frame(
            tables.points, ["sample_id", "query_type", "point", "keywords", *_FATE_KEYS, "lost_at"]
        ),
        verdicts=pd.DataFrame(
            tables.verdicts,
            columns=["sample_id", "query_type", "verdict", "stage", "points", "explanation"],
        ),
        skipped=_frame(tables.skipped, ["sample_id", "stage", "measure", "reason"]),
        recalls=tables.recalls.frame(evals.samples, ["step"], "value"),
        latency=_latency(log),
        problems=problems,
    )


_SLICE = 2_000  # samples per task: small enough for a smooth progress bar
_PARALLEL_FROM = 8_000  # below this, starting processes costs more than it saves


def _score_slice(
    state: tuple[RunContext, list[EvalSample], dict[str, SampleRecord], int],
    bounds: tuple[int, int],
) -> _Tables:
    ctx, samples, records, pool_cutoff = state
    tables = _Tables()
    scorer = _SampleScorer(ctx, tables, pool_cutoff)
    for index in range(*bounds):
        sample = samples[index]
        scorer.score(index, sample, records.get(sample.id))
    return tables


def _score_samples(
    ctx: RunContext,
    samples: list[EvalSample],
    records: dict[str, SampleRecord],
    pool_cutoff: int,
    workers: int,
    progress: bool,
) -> _Tables:
    """Score every sample, in slices, in forked worker processes when it pays."""
    bar = tqdm(
        total=len(samples), desc="scoring", unit="sample", disable=not progress, mininterval=0.5
    )
    merged = _Tables()
    with bar:
        parts = fork_map(
            _score_slice,
            (ctx, samples, records, pool_cutoff),
            len(samples),
            slice_size=_SLICE,
            workers=workers,
            on_done=lambda bounds: bar.update(bounds[1] - bounds[0]),
        )
    for part in parts:
        merged.extend(part)
    return merged


def _frame(rows: list[tuple], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame.from_records(rows, columns=columns)


def _latency(log: RunLog) -> pd.DataFrame:
    rows = [
        (stage.value, seconds) for r in log.records.values() for stage, seconds in r.latency.items()
    ]
    frame = pd.DataFrame(rows, columns=["stage", "seconds"])
    if frame.empty:
        return pd.DataFrame(columns=["stage", "mean", "p50", "p95", "n"])
    grouped = frame.groupby("stage")["seconds"]
    return pd.DataFrame(
        {
            "mean": grouped.mean(),
            "p50": grouped.median(),
            "p95": grouped.quantile(0.95),
            "n": grouped.count(),
        }
    ).reset_index()
