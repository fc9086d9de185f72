"""Score a recorded run stage by stage and give each sample a verdict."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from cofe._errors import InputError, InputProblem
from cofe.diagnose import StageOutcome, Step, Verdict, diagnose
from cofe.evalset import EvalSample, EvalSet, file_sha256, read_evalset
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
from cofe.stages._context import RunContext
from cofe.stages._judgements import RankedHits
from cofe.stages._result import ScoreResult
from cofe.stages.chunking import judge_chunking
from cofe.stages.generation import judge_answer
from cofe.stages.parse import judge_parse
from cofe.stages.ranking import judge_ranked


@dataclass
class _Tables:
    """Rows collected while scoring, turned into DataFrames once at the end."""

    scores: list[tuple] = field(default_factory=list)
    points: list[tuple] = field(default_factory=list)
    verdicts: list[dict] = field(default_factory=list)
    skipped: list[tuple] = field(default_factory=list)
    recalls: list[tuple] = field(default_factory=list)


class _SampleScorer:
    """Scores one sample into the shared tables."""

    def __init__(self, ctx: RunContext, tables: _Tables, pool_cutoff: int) -> None:
        self.ctx, self.t = ctx, tables
        self.n, self.k = pool_cutoff, ctx.config.top_k
        self._tokens: dict[int, list[str]] = {}

    def emit(
        self, sample: EvalSample, stage: Stage, measure: Measure, value: float | Unscored
    ) -> None:
        if isinstance(value, Unscored):
            self.t.skipped.append((sample.id, stage.value, measure.name, value.reason))
        else:
            self.t.scores.append(
                (sample.id, sample.query_type.value, stage.value, measure.name, value)
            )

    def skip(self, sample: EvalSample, stage: Stage, measures: list[Measure], reason: str) -> None:
        for measure in measures:
            self.t.skipped.append((sample.id, stage.value, measure.name, reason))

    def unscorable(self, sample: EvalSample, reason: str) -> None:
        self.t.verdicts.append(_verdict_row(sample, Verdict.UNSCORABLE, None, reason))

    def chunk_tokens(self, unit: int) -> list[str]:
        tokens = self._tokens.get(unit)
        if tokens is None:
            if self.ctx.config.mode is MatchMode.STRICT:
                tokens = self.ctx.chunks.normalized[unit].split()
            else:
                tokens = strict_tokens(self.ctx.chunks.normalized[unit])
            self._tokens[unit] = tokens
        return tokens

    def score(self, sample: EvalSample, record: SampleRecord | None) -> None:
        ctx, n, k = self.ctx, self.n, self.k
        cs = ctx.compiled[sample.id]
        if cs.unscorable:
            return self.unscorable(sample, cs.unscorable)
        if record is None:
            return self.unscorable(
                sample, "no record in samples.jsonl: the pipeline did not answer it"
            )
        labels = tuple(" & ".join(point.keywords) for point in cs.points)
        source_doc = ctx.resolve_doc(sample.source.doc) if sample.source else None
        passes = ctx.chunk_filter(cs, source_doc)
        outcomes: list[StageOutcome] = []
        steps: dict[Step, tuple[bool, ...]] = {}
        fates: dict[str, list] = {}

        # parse
        parse = judge_parse(ctx, cs, source_doc)
        self.emit(
            sample,
            Stage.PARSE,
            KeywordRecall(),
            parse if isinstance(parse, Unscored) else KeywordRecall().compute(parse.ranks),
        )
        if not isinstance(parse, Unscored):
            where = f"the parsed text of {source_doc!r}" if source_doc else "any parsed document"
            why = tuple(f"{_quote(m)} not in {where}" for m in parse.missing)
            outcomes.append(StageOutcome(Stage.PARSE, parse.hits, why))
            steps[Step.PARSE] = parse.hits
            fates["parse"] = list(parse.hits)

        # chunking
        corpus = None
        if len(ctx.chunks) == 0:
            self.skip(
                sample,
                Stage.CHUNKING,
                [KeywordRecall(), ChunkIntegrity()],
                "the run log has no chunks",
            )
        else:
            corpus = judge_chunking(ctx, cs, passes, source_doc)
            self.emit(
                sample,
                Stage.CHUNKING,
                KeywordRecall(),
                KeywordRecall().compute(_ranks(corpus.hits)),
            )
            self.emit(
                sample, Stage.CHUNKING, ChunkIntegrity(), ChunkIntegrity().compute(corpus.intact)
            )
            why = tuple(
                "; ".join(
                    f"{_quote((m,))} {reason}" for m, reason in zip(missing, reasons, strict=True)
                )
                for missing, reasons in zip(corpus.missing, corpus.why_missing, strict=True)
            )
            outcomes.append(StageOutcome(Stage.CHUNKING, corpus.hits, why))
            steps[Step.CORPUS] = corpus.hits
            steps[Step.CHUNK_INTACT] = corpus.intact
            fates["corpus"], fates["intact"] = list(corpus.hits), list(corpus.intact)

        # retrieval (candidate pool) and reranking (final context)
        pool = context = None
        if record.pool is not None:
            pool = judge_ranked(ctx, cs, record.pool, passes)
            self._ranked_measures(sample, Stage.RETRIEVAL, cs, pool, source_doc, cutoffs=(n, k))
            fates["pool_rank"] = list(pool.point_ranks)
            steps[Step.POOL] = tuple(r is not None and r <= n for r in pool.point_ranks)
            self._unknown(record, pool)
        if record.context is not None:
            context = judge_ranked(ctx, cs, record.context, passes)
            self._ranked_measures(sample, Stage.RERANKING, cs, context, source_doc, cutoffs=(k,))
            fates["context_rank"] = list(context.point_ranks)
            self._unknown(record, context)
            if pool is not None:
                self.emit(
                    sample,
                    Stage.RERANKING,
                    RerankLoss(k),
                    RerankLoss(k).compute(pool.point_ranks, context.point_ranks),
                )
                self.emit(
                    sample,
                    Stage.RERANKING,
                    RerankGain(k),
                    RerankGain(k).compute(pool.point_ranks, context.point_ranks),
                )
                in_pool = tuple(r is not None and r <= n for r in pool.point_ranks)
                outcomes.append(
                    StageOutcome(Stage.RETRIEVAL, in_pool, _ranked_why(pool, n, "pool"))
                )
            in_context = tuple(r is not None and r <= k for r in context.point_ranks)
            outcomes.append(
                StageOutcome(Stage.RERANKING, in_context, _ranked_why(context, k, "context", pool))
            )
            steps[Step.CONTEXT] = in_context
            given, given_stage = record.context[:k], Stage.RERANKING
        elif pool is not None:
            # no reranker: the generator saw the pool's top-K, so a loss below K is retrieval's
            in_top = tuple(r is not None and r <= k for r in pool.point_ranks)
            outcomes.append(
                StageOutcome(Stage.RETRIEVAL, in_top, _ranked_why(pool, k, "pool top-K"))
            )
            steps[Step.CONTEXT] = in_top
            given, given_stage = record.pool[:k], Stage.RETRIEVAL
        else:
            given, given_stage = None, Stage.RETRIEVAL
            self.skip(
                sample,
                Stage.RETRIEVAL,
                [KeywordRecall(k)],
                "the record has neither pool nor context",
            )

        reference = strict_tokens(sample.reference_answer) if sample.reference_answer else None
        if given is not None:
            if reference is None:
                self.skip(sample, given_stage, [RougeLRecall(k)], "no reference answer")
            else:
                self.emit(
                    sample,
                    given_stage,
                    RougeLRecall(k),
                    RougeLRecall(k).compute(self._context_tokens(given), reference),
                )

        # generation
        if record.answer is not None:
            answer = judge_answer(ctx, cs, record.answer)
            self.emit(
                sample, Stage.GENERATION, KeywordRecall(), KeywordRecall().compute(answer.ranks)
            )
            why = tuple(f"the answer lacks {_quote(m)}" for m in answer.missing)
            outcomes.append(StageOutcome(Stage.GENERATION, answer.hits, why))
            steps[Step.ANSWER] = answer.hits
            fates["answer"] = list(answer.hits)
            if reference is None:
                self.skip(sample, Stage.GENERATION, [BLEU(), RougeL()], "no reference answer")
            else:
                tokens = strict_tokens(record.answer)
                self.emit(sample, Stage.GENERATION, BLEU(), BLEU().compute(tokens, reference))
                self.emit(sample, Stage.GENERATION, RougeL(), RougeL().compute(tokens, reference))
        elif record.error is None:
            self.skip(
                sample,
                Stage.GENERATION,
                [KeywordRecall()],
                "the record has no answer (generation not run)",
            )

        diagnosis = diagnose(labels, outcomes, record.error)
        self.t.verdicts.append(
            _verdict_row(
                sample, diagnosis.verdict, diagnosis.stage, diagnosis.explanation, len(cs.points)
            )
        )
        qtype = sample.query_type.value
        for step, hits in steps.items():
            self.t.recalls.append((sample.id, qtype, step.value, sum(hits) / len(hits)))
        for p, point in enumerate(cs.points):
            self.t.points.append(
                (
                    sample.id,
                    qtype,
                    point.index,
                    labels[p],
                    *(fates[key][p] if key in fates else None for key in _FATE_KEYS),
                    diagnosis.lost_at[p].value if diagnosis.lost_at[p] else None,
                )
            )
        return None

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
            self.emit(sample, stage, KeywordRecall(cutoff), KeywordRecall(cutoff).compute(ranks))
            self.emit(
                sample, stage, KeywordAccuracy(cutoff), KeywordAccuracy(cutoff).compute(ranks)
            )
        k = self.k
        if cs.coarse:
            self.emit(
                sample, stage, CoarsePrecision(k), CoarsePrecision(k).compute(hits.mentions_coarse)
            )
        else:
            self.skip(
                sample, stage, [CoarsePrecision(k)], "the sample has no usable coarse keyword"
            )
        doc_measures = [DocRecall(k), DocPrecision(k), NDCG(k)]
        if sample.source is None:
            self.skip(sample, stage, doc_measures, "the sample names no source document")
        elif source_doc is None:
            self.skip(
                sample,
                stage,
                doc_measures,
                f"source {sample.source.doc!r} matches no document of the run",
            )
        else:
            relevant = {source_doc}
            self.emit(sample, stage, DocRecall(k), DocRecall(k).compute(hits.doc_ids, relevant))
            self.emit(
                sample, stage, DocPrecision(k), DocPrecision(k).compute(hits.doc_ids, relevant)
            )
            in_corpus = self.ctx.chunks_per_doc.get(source_doc, 0)
            self.emit(sample, stage, NDCG(k), NDCG(k).compute(hits.doc_ids, relevant, in_corpus))

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


_FATE_KEYS = ("parse", "corpus", "intact", "pool_rank", "context_rank", "answer")
# nullable types: a stage that was not judged is <NA>, never a float NaN posing as a rank
_FATE_TYPES = {
    "parse": "boolean",
    "corpus": "boolean",
    "intact": "boolean",
    "pool_rank": "Int64",
    "context_rank": "Int64",
    "answer": "boolean",
}


def _ranks(hits: tuple[bool, ...]) -> tuple[int | None, ...]:
    return tuple(1 if hit else None for hit in hits)


def _quote(keywords: tuple[str, ...]) -> str:
    return ", ".join(repr(k) for k in keywords)


def _ranked_why(
    hits: RankedHits, cutoff: int, name: str, pool: RankedHits | None = None
) -> tuple[str, ...]:
    reasons = []
    for p, (rank, missing) in enumerate(zip(hits.point_ranks, hits.missing, strict=True)):
        if missing:
            reason = f"{_quote(missing)} not in the {name} ({len(hits.doc_ids)} chunk(s))"
        else:
            reason = f"complete only at {name} rank {rank}, below the cutoff {cutoff}"
        if pool is not None and pool.point_ranks[p] is not None:
            reason = f"complete at pool rank {pool.point_ranks[p]}, but {reason}"
        reasons.append(reason)
    return tuple(reasons)


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
) -> ScoreResult:
    """Score every stage of a recorded run against the eval set's keywords.

    Bad records never stop scoring: they are listed in ``result.problems`` and
    the samples they concern are marked unscorable with the reason.
    """
    config = config or ScoreConfig()
    log = run if isinstance(run, RunLog) else read_run(run)
    evals = _load_evalset(log, evalset)
    problems = [*log.problems, *evals.problems]
    ctx = RunContext(log, evals.samples, config)
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
    tables = _Tables()
    scorer = _SampleScorer(ctx, tables, pool_cutoff)
    for sample in tqdm(
        evals.samples, desc="scoring", unit="sample", disable=not progress, mininterval=0.5
    ):
        scorer.score(sample, log.records.get(sample.id))
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
        scores=_frame(tables.scores, ["sample_id", "query_type", "stage", "measure", "value"]),
        points=_frame(
            tables.points, ["sample_id", "query_type", "point", "keywords", *_FATE_KEYS, "lost_at"]
        ),
        verdicts=pd.DataFrame(
            tables.verdicts,
            columns=["sample_id", "query_type", "verdict", "stage", "points", "explanation"],
        ),
        skipped=_frame(tables.skipped, ["sample_id", "stage", "measure", "reason"]),
        recalls=_frame(tables.recalls, ["sample_id", "query_type", "step", "value"]),
        latency=_latency(log),
        problems=problems,
    )


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
