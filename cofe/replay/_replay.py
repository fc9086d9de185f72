"""The replay pass: the run's own pipeline again, one stage's output replaced by an oracle.

For each selected sample of a scored run and each oracle:

* ``context``: the oracle chunks first in the context the generator received (the context
  keeps its size; the pool gets them first too, so the record stays consistent);
* ``pool``: the oracle chunks first in the retrieved pool, then the run's own reranker (when
  it has one) and generator;
* ``no-noise``: the context is the oracle chunks alone (does the generator fail because of
  the distractors around the point?);
* ``chunking``: the source re-chunked so that no lost point is cut -- the chunks around each
  cut point merged into one --, the corpus indexed again by the run's own retriever, then
  retrieval, reranking and generation as the run did them (the built-in pipeline only: it
  alone can be rebuilt from its manifest).

Everything downstream of the replaced stage is real. The new answers are scored with the
same scorer and settings as the run's scoring (``score_run`` on the replayed records), so a
new verdict means what the old one meant.

Each replayed sample is appended to ``replay.jsonl`` (fsync'ed, one line) as it finishes and
kept in the content-addressed cache: a killed pass resumes where it stopped, and a second
pass with the same inputs calls nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cofe._atomic import open_own_for_append
from cofe._cache import Cache, content_key, text_digests
from cofe._errors import CofeError, ConfigurationError, InputError, InputProblem
from cofe._jsonl import read_jsonl, repair_torn_tail, scrub_surrogates
from cofe.adapters import ChunkRegistry, StagedPipeline
from cofe.evalset import EvalSample, EvalSet, read_evalset
from cofe.replay._oracle import SampleOracle, find_oracles
from cofe.replay._written import split_by_oracle, write_replayed_runs
from cofe.results import ScoreResult, read_scores
from cofe.runlog import (
    Chunk,
    RankedChunk,
    RunLog,
    SampleRecord,
    Stage,
    read_run,
    run_folder_lock,
)
from cofe.stages import ScoreConfig

REPLAY_FILE = "replay.jsonl"
CACHE_KIND = "replay"
_KEY_VERSION = "cofe-replay/1"  # bump when what a cached replay holds changes
FAILURES_IN_A_ROW = 5  # a pipeline failing this many samples in a row stops the pass
PASS = "pass"
# verdicts a replay has nothing to learn from: no answer was judged, or none was scored
NOT_FAILED = ("pass", "pass_to_context", "pass_to_pool", "pass_to_corpus", "pass_to_parse")
NOT_REPLAYED = ("unscorable", "pipeline_error")


class Oracle(StrEnum):
    """Which stage's output the oracle replaces."""

    CHUNKING = "chunking"
    POOL = "pool"
    CONTEXT = "context"
    NO_NOISE = "no-noise"


class ReplayRecord(BaseModel):
    """One replayed sample under one oracle: a line of ``replay.jsonl``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sample_id: str
    oracle: Oracle
    key: str = Field(description="content key of everything the replay depends on")
    oracle_chunks: list[str]
    spans: list[int] = Field(default_factory=list, description="points given as source spans")
    pool: list[str] | None = None
    context: list[str] | None = None
    answer: str | None = None
    error: str | None = None
    calls: dict[str, int] = Field(default_factory=dict, description="stage calls made")
    seconds: float = 0.0
    cached: bool = False


FSYNC_EVERY_SECONDS = 0.5


class _Appender:
    """``replay.jsonl`` open for the pass: each replay one line, written by one call and
    flushed as it finishes (a killed process loses none: the kernel holds it), fsync'ed every
    half second and at the end (what a power cut may cost). A line a crash tore is cut first."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.synced = time.monotonic()

    def __enter__(self) -> _Appender:
        repair_torn_tail(self.path)
        self.handle = open_own_for_append(self.path)
        return self

    def add(self, record: ReplayRecord) -> None:
        self.handle.write((record.model_dump_json() + "\n").encode("utf-8"))
        self.handle.flush()
        if time.monotonic() - self.synced >= FSYNC_EVERY_SECONDS:
            os.fsync(self.handle.fileno())
            self.synced = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        try:
            self.handle.flush()
            os.fsync(self.handle.fileno())
        finally:
            self.handle.close()


class ReplayStopped(CofeError, RuntimeError):
    """The pass stopped (a pipeline failing sample after sample): one line, what is kept."""

    exit_code = 1  # a failure, not a usage error


@dataclass
class Target:
    """What the replay knows of one selected sample."""

    sample: EvalSample
    verdict: str
    stage: str | None
    source: str | None
    record: SampleRecord
    oracle: SampleOracle


@dataclass
class Replayable:
    """The run's pipeline, rebuilt and prepared, and the stages it lets an oracle replace."""

    pipeline: StagedPipeline
    describe: dict[str, Any]
    top_k: int
    why_not: dict[Oracle, str] = field(default_factory=dict)  # oracle -> why it cannot run
    rebuild: Callable[[list[Chunk]], StagedPipeline] | None = None  # a pipeline over new chunks

    @property
    def has_reranker(self) -> bool:
        return self.pipeline.rerank is not None


@dataclass
class Plan:
    """The pass before anything runs: what ``--dry-run`` prints."""

    targets: list[Target]
    oracles: list[Oracle]
    tasks: list[tuple[Target, Oracle]]
    keys: dict[tuple[str, Oracle], str]  # each task's content key (chunking: at run time)
    no_oracle: list[Target]  # samples whose lost points no chunk or span holds
    why_not: dict[Oracle, str]
    done: int  # tasks already in replay.jsonl
    calls: dict[str, int]  # stage -> calls still to make
    seconds: float | None  # estimate, from the run's own per-stage latency
    by_verdict: dict[str, int] = field(default_factory=dict)  # selected samples per verdict


@dataclass
class ReplayRun:
    """A finished pass: the records and the replayed scoring per oracle."""

    run: str
    scores: str
    plan: Plan
    records: dict[tuple[str, Oracle], ReplayRecord]
    new_verdicts: dict[tuple[str, Oracle], str]
    # the replayed answer conveys every point (the answer step's own decision): what
    # "recovered" means -- a verdict may still name an upstream loss the oracle went around
    # (a point cut by chunking stays cut in the corpus while the span reached the answer)
    answer_ok: dict[tuple[str, Oracle], bool]
    total_samples: int  # scored samples of the run (the denominator of every share)
    verdicts: dict[str, str]  # every scored sample's original verdict
    sources: dict[str, str | None]
    has_reranker: bool
    out: Path
    # each oracle's answers as a scored run beside RUN (``OUT/<oracle>/``): the run's samples,
    # the replayed ones with the oracle's answers -- what ``cofe compare`` and ``sweep`` read
    runs: dict[Oracle, Path] = field(default_factory=dict)


# --- selecting and planning -------------------------------------------------------------------


def select_targets(
    result: ScoreResult,
    log: RunLog,
    evalset: EvalSet,
    *,
    verdicts: Sequence[str] | None = None,
    samples: Sequence[str] | None = None,
    limit: int | None = None,
) -> tuple[list[tuple[EvalSample, str, str | None, str | None]], dict[str, list[int]]]:
    """The samples to replay (failed ones by default) and, per sample, its lost points."""
    frame = result.verdicts
    by_id = {s.id: s for s in evalset.samples}
    wanted_ids = set(samples or ())
    unknown = sorted(wanted_ids - set(frame["sample_id"]))
    if unknown:
        raise InputError(
            InputProblem(
                str(result.run), None, "sample", f"no scored sample {unknown[0]!r} in this run"
            )
        )
    chosen = []
    for row in frame.itertuples(index=False):
        sid, verdict = str(row.sample_id), str(row.verdict)
        if wanted_ids and sid not in wanted_ids:
            continue
        if verdicts:
            if verdict not in verdicts:
                continue
        elif not wanted_ids and (verdict in NOT_FAILED or verdict in NOT_REPLAYED):
            continue
        if verdict in NOT_REPLAYED or sid not in by_id or sid not in log.records:
            continue
        stage = None if _missing(row.stage) else str(row.stage)
        source = None if _missing(row.source) else str(row.source)
        chosen.append((by_id[sid], verdict, stage, source))
        if limit is not None and len(chosen) >= limit:
            break
    ids = {c[0].id for c in chosen}
    lost: dict[str, list[int]] = {sid: [] for sid in ids}
    for row in result.points.itertuples(index=False):
        sid = str(row.sample_id)
        if sid in lost and not _held(row.answer):
            lost[sid].append(int(str(row.point)))
    for sample, _, _, _ in chosen:
        if not lost[sample.id]:  # a passing sample asked for: its oracle is every point
            lost[sample.id] = list(range(len(sample.fine_keywords)))
    return chosen, lost


def _held(value: Any) -> bool:
    """A points-table flag read as held: True (numpy's or Python's); missing is not held."""
    return not _missing(value) and bool(value)


def _missing(value: Any) -> bool:
    """None, NaN or pandas' NA (whose comparisons are neither true nor false) -- or blank."""
    if value is None or (isinstance(value, str) and not value):
        return True
    try:
        return bool(value != value)
    except TypeError:  # pandas.NA: "boolean value of NA is ambiguous"
        return True


def _chunks(log: RunLog, ranked: Iterable[RankedChunk] | None) -> list[Chunk]:
    return [log.chunks[r.chunk_id] for r in ranked or () if r.chunk_id in log.chunks]


def given_context(record: SampleRecord, top_k: int) -> list[RankedChunk]:
    """What the generator received in the run: the context, else the pool's first top_k."""
    if record.context is not None:
        return list(record.context)
    return list(record.pool or [])[:top_k]


def _first(oracle: Sequence[Chunk], rest: Sequence[Chunk], size: int) -> list[Chunk]:
    """The oracle chunks, then the others in their order, ``size`` in all (at least the oracle)."""
    ids = {c.chunk_id for c in oracle}
    out = list(oracle) + [c for c in rest if c.chunk_id not in ids]
    return out[: max(size, len(oracle))]


def _estimate(log: RunLog, calls: dict[str, int]) -> float | None:
    """Seconds for ``calls`` at the run's own mean latency of each stage."""
    total, known = 0.0, False
    for stage, n in calls.items():
        seen = [r.latency[Stage(stage)] for r in log.records.values() if Stage(stage) in r.latency]
        if seen:
            total += n * sum(seen) / len(seen)
            known = True
    return total if known else None


def _task_calls(oracle: Oracle, replayable: Replayable) -> dict[str, int]:
    calls = {Stage.GENERATION.value: 1}
    if oracle in (Oracle.POOL, Oracle.CHUNKING) and replayable.has_reranker:
        calls[Stage.RERANKING.value] = 1
    if oracle is Oracle.CHUNKING:
        calls[Stage.RETRIEVAL.value] = 1
    return calls


# --- rebuilding the run's pipeline ------------------------------------------------------------


def _default_config(described: dict[str, Any]) -> dict[str, Any]:
    """The ``PipelineConfig`` a default run's manifest describes (its generator and reranker
    entries are their ``describe()``: names mapped back to the config's values)."""
    from cofe.pipeline import PipelineConfig

    options = {k: v for k, v in described.items() if k in PipelineConfig.model_fields}
    options["generator"] = "openai" if described.get("generator") == "openai" else "extractive"
    reranker = described.get("reranker", "none")
    if reranker == "cross-encoder":
        reranker = f"cross-encoder:{described.get('model', '')}"
    options["reranker"] = reranker
    return options


def rebuild(
    log: RunLog,
    spec: str | None,
    cache: Cache | None,
    endpoint: Any = None,
    generator: str | None = None,
) -> Replayable:
    """The run's pipeline, rebuilt and prepared over the run's documents.

    The built-in pipeline is rebuilt from its manifest (``spec`` None); any other from
    ``spec`` (``package.module:factory``, as ``cofe run --pipeline`` was given). Its chunks
    must be the run's: a pipeline that chunks differently now would replay another run.
    ``generator`` (``package.module:function``, ``generate(question, contexts) -> answer``,
    contexts the run's chunks) stands in for a pipeline cofe cannot take apart (a framework's,
    recorded through its spans): the context and no-noise oracles run through it.
    """
    from cofe.runner import load_pipeline

    described = log.manifest.pipeline
    manifest = str(log.path / "manifest.json")
    rebuild_fn: Callable[[list[Chunk]], StagedPipeline] | None = None
    if generator is not None:
        if spec is not None:
            raise ConfigurationError("give --pipeline or --generator, not both")
        return _generator_only(log, generator, cache)
    if spec is None:
        if described.get("name") != "default":
            raise InputError(
                InputProblem(
                    manifest,
                    None,
                    "pipeline",
                    "this run was not made by the built-in pipeline: give --pipeline "
                    "package.module:factory, the pipeline `cofe run --pipeline` was given",
                )
            )
        options = _default_config(described)
        if endpoint is not None:
            options["endpoint"] = endpoint
        pipeline = load_pipeline("default", **options)

        def rebuild_fn(chunks: list[Chunk]) -> StagedPipeline:
            fresh = load_pipeline("default", **options)
            assert isinstance(fresh, StagedPipeline)
            _index_chunks(fresh, chunks, cache)
            return fresh

    else:
        from cofe.replay._seams import takes_seam
        from cofe.runner import load_factory

        factory = load_factory(spec)
        if takes_seam(factory):  # a framework's pipeline, its retriever handed to cofe
            return _framework_seam(log, spec, factory, cache)
        pipeline = load_pipeline(spec)
    if not isinstance(pipeline, StagedPipeline):
        kind = type(pipeline).__name__
        raise ConfigurationError(
            str(
                InputProblem(
                    manifest,
                    None,
                    "pipeline",
                    f"{kind} exposes no stage cofe can replace (it is recorded as one call, "
                    "query -> answer): replay needs a pipeline of separate stages -- the built-in "
                    "one, or cofe.adapters.PythonPipeline(retrieve=, rerank=, generate=) --, a "
                    "factory taking fixed_documents= (a framework pipeline built around "
                    "cofe's fixed-documents retriever: docs/replay.md), or "
                    "--generator MODULE:FUNCTION, generate(question, contexts) -> answer, to replay "
                    "the context oracles through the app's own generator",
                )
            )
        )
    documents = list(log.documents.values())
    registry = pipeline.prepare(documents, cache)
    recorded = {c.chunk_id: c.text for c in log.chunks.values() if not c.is_derived}
    now = {c.chunk_id: c.text for c in registry.chunks if not c.is_derived}
    if recorded and now and now != recorded:
        raise InputError(
            InputProblem(
                str(log.path / "chunks.jsonl"),
                None,
                "chunk_id",
                "the rebuilt pipeline chunks the documents differently from the recorded run "
                f"({len(set(now) ^ set(recorded))} chunk ids differ): replaying it would "
                "replay another pipeline",
            )
        )
    # the registry must know every recorded item (derived ones too) to name a reranker's output
    known = {c.chunk_id for c in registry.chunks}
    for chunk in log.chunks.values():
        if chunk.chunk_id not in known:
            registry.resolve(chunk)
    why_not: dict[Oracle, str] = {}
    if pipeline.generate is None:
        for oracle in Oracle:
            why_not[oracle] = "the pipeline has no generator: no answer to replay"
    if pipeline.retrieve is None and Oracle.POOL not in why_not:
        why_not[Oracle.POOL] = "the pipeline has no retriever: there is no pool to replace"
    if rebuild_fn is None and Oracle.CHUNKING not in why_not:
        why_not[Oracle.CHUNKING] = (
            "only the built-in pipeline can be re-chunked and re-indexed from its manifest; "
            "a pipeline of callables keeps its own index"
        )
    return Replayable(
        pipeline,
        pipeline.describe(),
        pipeline.top_k,
        why_not,
        rebuild_fn,
    )


def _generator_only(log: RunLog, spec: str, cache: Cache | None) -> Replayable:
    """A run's generator alone, as a pipeline over the run's recorded chunks."""
    from cofe.adapters import PythonPipeline
    from cofe.runner import load_factory

    generate = load_factory(spec)
    if not callable(generate):
        raise ConfigurationError(
            f"--generator {spec!r} is not callable: give generate(question, contexts)"
        )
    top_k = log.manifest.top_k or max(
        (len(r.context or ()) for r in log.records.values()), default=4
    )
    pipeline = PythonPipeline(
        chunks=list(log.chunks.values()), generate=generate, top_k=top_k, name=f"generator {spec}"
    )
    pipeline.prepare(list(log.documents.values()), cache)
    why = (
        "only a generator was given (--generator): the run's retriever and reranker are not in "
        "cofe's hands -- pass --pipeline to replay them"
    )
    return Replayable(
        pipeline,
        pipeline.describe(),
        top_k,
        {Oracle.POOL: why, Oracle.CHUNKING: why},
        None,
    )


def _framework_seam(
    log: RunLog, spec: str, factory: Callable[..., Any], cache: Cache | None
) -> Replayable:
    """A framework pipeline rebuilt around cofe's fixed-documents retriever: what the
    retriever returns is the oracle's, everything after it the app's own."""
    from cofe.adapters import PythonPipeline
    from cofe.replay._seams import seam_generator

    generate, _ = seam_generator(factory, spec)
    # the retriever hands on as many documents as it did in the run
    size = max((len(r.pool or ()) for r in log.records.values()), default=0)
    top_k = size or log.manifest.top_k or 4
    pipeline = PythonPipeline(
        chunks=list(log.chunks.values()),
        generate=generate,
        top_k=top_k,
        name=f"{spec} (fixed-documents retriever)",
    )
    pipeline.prepare(list(log.documents.values()), cache)
    why_not = {
        Oracle.CHUNKING: "a framework pipeline splits and indexes with its own code: "
        "re-chunk it in the app and record a new run"
    }
    if any(_app_changes_pool(r) for r in log.records.values()):
        # the retriever is the only seam: what it returns goes through the app's reranker
        # or filter, so the context the generator gets cannot be set from there
        why = (
            "the app changes the retrieved documents before its generator (a reranker or a "
            "filter) and the retriever is the seam cofe replaces: give --generator for the "
            "context oracles"
        )
        why_not[Oracle.CONTEXT] = why
        why_not[Oracle.NO_NOISE] = why
    return Replayable(pipeline, pipeline.describe(), top_k, why_not, None)


def _app_changes_pool(record: SampleRecord) -> bool:
    """The context the run recorded is not the retrieved pool's first items, in order."""
    if record.context is None or record.pool is None:
        return False
    context = [r.chunk_id for r in record.context]
    return context != [r.chunk_id for r in record.pool][: len(context)]


def _index_chunks(pipeline: Any, chunks: list[Chunk], cache: Cache | None) -> None:
    """The built-in pipeline over a given corpus: its own retriever (and reranker) indexing it."""
    pipeline.registry = ChunkRegistry(chunks)
    pipeline.retriever.index(chunks, cache)
    if pipeline.rerank is not None:
        pipeline.rerank.prepare(chunks, cache)
    if hasattr(pipeline.generate, "prepare"):
        pipeline.generate.prepare(chunks, cache)


def rechunked(log: RunLog, targets: Sequence[Target]) -> list[Chunk]:
    """The run's corpus with the chunks around each cut point merged into one chunk: the
    chunks of the source document overlapping the point's source span, replaced by one chunk
    over their whole stretch (spans of several samples overlapping are merged first)."""
    stretches: dict[str, list[tuple[int, int]]] = {}
    for target in targets:
        for chunk in target.oracle.chunks:
            if chunk.kind != "chunk" and chunk.start is not None and chunk.end is not None:
                stretches.setdefault(chunk.doc_id, []).append((chunk.start, chunk.end))
    corpus = [c for c in log.chunks.values() if not c.is_derived]
    for doc_id, spans in stretches.items():
        placed = [
            (c.start, c.end)
            for c in corpus
            if c.doc_id == doc_id and c.start is not None and c.end is not None
        ]
        # each span widened to the chunks it overlaps, whole: re-chunking joins them
        merged = _merge(
            [
                (
                    min([s, *(a for a, b in placed if a < e and b > s)]),
                    max([e, *(b for a, b in placed if a < e and b > s)]),
                )
                for s, e in spans
            ]
        )
        text = log.documents[doc_id].text
        for k, (s, e) in enumerate(merged):
            corpus = [c for c in corpus if not (c.doc_id == doc_id and _overlaps(c, s, e))]
            ident = f"{doc_id}#oracle-{k}"
            corpus.append(Chunk(chunk_id=ident, doc_id=doc_id, text=text[s:e], start=s, end=e))
    return corpus


def _overlaps(chunk: Chunk, start: int, end: int) -> bool:
    return (
        chunk.start is not None
        and chunk.end is not None
        and chunk.start < end
        and chunk.end > start
    )


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


# --- the pass ----------------------------------------------------------------------------------


class _Counted:
    """A stage call counted (cost per replayed sample)."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __call__(self, stage: Stage, fn: Callable[..., Any], *args: Any) -> Any:
        # an LLM stage answered from its client's cache made no call: counted apart (the
        # replays run one at a time, so the usage's change is this call's)
        usage = getattr(fn, "usage", None)
        cached_before = getattr(usage, "cached", 0)
        try:
            return fn(*args)
        finally:
            hit = getattr(usage, "cached", 0) > cached_before
            name = f"{stage.value} (cached)" if hit else stage.value
            self.calls[name] = self.calls.get(name, 0) + 1


def _replay_one(
    target: Target,
    oracle: Oracle,
    replayable: Replayable,
    log: RunLog,
    rechunked_pipeline: StagedPipeline | None,
) -> tuple[list[str] | None, list[str] | None, str | None, dict[str, int]]:
    """(pool, context, answer, calls) of one sample under one oracle."""
    p = replayable.pipeline
    record = target.record
    top_k = replayable.top_k
    chosen = list(target.oracle.chunks)
    pool = _chunks(log, record.pool)
    before = _chunks(log, given_context(record, top_k))
    count = _Counted()
    assert p.generate is not None
    if oracle is Oracle.CHUNKING:
        assert rechunked_pipeline is not None
        trace = rechunked_pipeline.answer(target.sample.query)
        if trace.error is not None:
            raise RuntimeError(f"{trace.error.stage.value}: {trace.error.message}")
        calls = {s.value: 1 for s in trace.latency}
        new_pool = [r.chunk_id for r in trace.pool] if trace.pool is not None else None
        new_context = [r.chunk_id for r in trace.context] if trace.context is not None else None
        return new_pool, new_context, trace.answer, calls
    new_pool_chunks = _first(chosen, pool, len(pool)) if pool else list(chosen)
    new_pool = [c.chunk_id for c in new_pool_chunks]
    context: list[str] | None
    if oracle is Oracle.CONTEXT:
        given = _first(chosen, before, len(before))
        context = [c.chunk_id for c in given] if record.context is not None else None
    elif oracle is Oracle.NO_NOISE:
        given = list(chosen)
        context = [c.chunk_id for c in given]
    else:  # POOL: the run's own reranker over the new pool
        if p.rerank is not None:
            ranked = p.registry.ranked(
                count(Stage.RERANKING, p.rerank, target.sample.query, new_pool_chunks)
            )
            given = [_lookup(p, log, r.chunk_id) for r in ranked]
            context = [r.chunk_id for r in ranked]
        else:
            given = new_pool_chunks[:top_k]
            context = None
    answer = count(Stage.GENERATION, p.generate, target.sample.query, given)
    if not isinstance(answer, str):
        raise TypeError(f"generate returned {type(answer).__name__}, not str")
    return new_pool, context, answer, count.calls


def _lookup(pipeline: StagedPipeline, log: RunLog, chunk_id: str) -> Chunk:
    found = pipeline.registry.by_id.get(chunk_id) or log.chunks.get(chunk_id)
    if found is None:
        raise KeyError(f"the reranker returned an unknown chunk {chunk_id!r}")
    return found


def _key(
    target: Target, oracle: Oracle, replayable: Replayable, log: RunLog, corpus: str | None = None
) -> str:
    """Everything a replay's answer depends on: the pipeline, the oracle, the question, what
    the replaced stage hands on (texts, not ids), and for chunking the new corpus."""
    record = target.record
    return content_key(
        _KEY_VERSION,
        replayable.describe,
        oracle.value,
        target.sample.query,
        text_digests(c.text for c in target.oracle.chunks),
        text_digests(c.text for c in _chunks(log, record.pool)),
        text_digests(c.text for c in _chunks(log, given_context(record, replayable.top_k))),
        record.context is not None,
        corpus,
    )


def plan_replay(
    run_dir: str | os.PathLike[str],
    *,
    scores: str | os.PathLike[str] | None = None,
    oracles: Sequence[Oracle] = tuple(Oracle),
    verdicts: Sequence[str] | None = None,
    samples: Sequence[str] | None = None,
    limit: int | None = None,
    out: str | os.PathLike[str] | None = None,
    replayable: Replayable | None = None,
    log: RunLog | None = None,
) -> tuple[Plan, RunLog, ScoreResult, dict[str, str]]:
    """What a pass would do, nothing run: the targets, their oracles, the calls to make."""
    run = Path(run_dir)
    scores_dir = Path(scores) if scores is not None else run / "scores"
    if not (scores_dir / "summary.json").exists():
        raise InputError(
            InputProblem(
                str(scores_dir), None, None, "no complete scoring here: run `cofe score` first"
            )
        )
    result = read_scores(scores_dir)
    log = log if log is not None else read_run(run)
    evalset = read_evalset(log.evalset_path)
    config = _config(result)
    chosen, lost = select_targets(
        result, log, evalset, verdicts=verdicts, samples=samples, limit=limit
    )
    top_k = replayable.top_k if replayable is not None else (log.manifest.top_k or 4)
    found = find_oracles(log, [c[0] for c in chosen], lost, config, top_k)
    targets = [
        Target(sample, verdict, stage, source, log.records[sample.id], found[sample.id])
        for sample, verdict, stage, source in chosen
    ]
    usable = [t for t in targets if t.oracle.usable]
    why_not = dict(replayable.why_not) if replayable is not None else {}
    runnable = [o for o in oracles if o not in why_not]
    done_keys = set(_read_done(Path(out) if out else run / "replay").keys())
    tasks: list[tuple[Target, Oracle]] = []
    keys: dict[tuple[str, Oracle], str] = {}
    calls: dict[str, int] = {}
    done = 0
    for target in usable:
        for oracle in runnable:
            if oracle is Oracle.CHUNKING and not target.oracle.spans:
                continue  # chunking cut none of its points: nothing to re-chunk
            tasks.append((target, oracle))
            if replayable is not None and oracle is not Oracle.CHUNKING:
                key = keys[(target.sample.id, oracle)] = _key(target, oracle, replayable, log)
                if key in done_keys:
                    done += 1
                    continue
            stub = replayable or Replayable(StagedPipeline(), {}, top_k)
            for stage, n in _task_calls(oracle, stub).items():
                calls[stage] = calls.get(stage, 0) + n
    counted: dict[str, int] = {}
    for t in targets:
        counted[t.verdict] = counted.get(t.verdict, 0) + 1
    plan = Plan(
        targets,
        list(oracles),
        tasks,
        keys,
        [t for t in targets if not t.oracle.usable],
        why_not,
        done,
        calls,
        _estimate(log, calls),
        counted,
    )
    verdict_of = {str(r.sample_id): str(r.verdict) for r in result.verdicts.itertuples()}
    return plan, log, result, verdict_of


def _config(result: ScoreResult) -> ScoreConfig:
    config = result.config
    return config if isinstance(config, ScoreConfig) else ScoreConfig.model_validate(config)


def _read_done(folder: Path) -> dict[str, ReplayRecord]:
    path = folder / REPLAY_FILE
    if not path.exists():
        return {}
    done = {}
    for _, item in read_jsonl(path, ReplayRecord):
        if isinstance(item, ReplayRecord) and item.error is None:  # a failed one is retried
            done[item.key] = item
    return done


def replay_run(
    run_dir: str | os.PathLike[str],
    *,
    scores: str | os.PathLike[str] | None = None,
    oracles: Sequence[Oracle] = tuple(Oracle),
    verdicts: Sequence[str] | None = None,
    samples: Sequence[str] | None = None,
    limit: int | None = None,
    pipeline: str | None = None,
    generator: str | None = None,
    endpoint: Any = None,
    cache: Cache | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: bool = False,
    replayable: Replayable | None = None,
    log: RunLog | None = None,
) -> ReplayRun:
    """Replay the selected samples of a scored run under each oracle, and score the replays.

    ``replayable``: the pipeline already rebuilt (tests, or a caller that built it once);
    else it is rebuilt from the manifest (built-in) or ``pipeline`` (``module:factory``).
    """
    run = Path(run_dir)
    folder = Path(out) if out is not None else run / "replay"
    # one pass per replay folder (a second is refused in one line, naming the holder), and the
    # run read unchanged while it goes (a `cofe run` resuming or a `cofe score` rewriting the
    # scoring is refused): the run folder's own flock, which the kernel drops when a holder is
    # killed, so the next pass resumes from replay.jsonl
    with (
        run_folder_lock(run, purpose="cofe replay", reading=True),
        run_folder_lock(
            folder, purpose="cofe replay", hint="give another replay folder with --out"
        ),
    ):
        return _replay_locked(
            run,
            folder,
            scores=scores,
            oracles=oracles,
            verdicts=verdicts,
            samples=samples,
            limit=limit,
            pipeline=pipeline,
            generator=generator,
            endpoint=endpoint,
            cache=cache,
            progress=progress,
            replayable=replayable,
            log=log,
        )


def _replay_locked(
    run: Path,
    folder: Path,
    *,
    scores: str | os.PathLike[str] | None,
    oracles: Sequence[Oracle],
    verdicts: Sequence[str] | None,
    samples: Sequence[str] | None,
    limit: int | None,
    pipeline: str | None,
    generator: str | None,
    endpoint: Any,
    cache: Cache | None,
    progress: bool,
    replayable: Replayable | None,
    log: RunLog | None,
) -> ReplayRun:
    log = log if log is not None else read_run(run)  # ``log``: the run, already read
    if replayable is None:
        replayable = rebuild(log, pipeline, cache, endpoint, generator)
    plan, log, result, verdict_of = plan_replay(
        run,
        scores=scores,
        oracles=oracles,
        verdicts=verdicts,
        samples=samples,
        limit=limit,
        out=folder,
        replayable=replayable,
        log=log,
    )
    folder.mkdir(parents=True, exist_ok=True)
    done = _read_done(folder)
    store = cache or Cache(None)
    records: dict[tuple[str, Oracle], ReplayRecord] = {}
    corpora: dict[Oracle, list[Chunk]] = {}
    rechunked_pipeline = None
    corpus_key = None
    if any(o is Oracle.CHUNKING for _, o in plan.tasks):
        corpus = rechunked(log, [t for t, o in plan.tasks if o is Oracle.CHUNKING])
        corpora[Oracle.CHUNKING] = corpus
        corpus_key = content_key(text_digests(c.text for c in corpus))
        assert replayable.rebuild is not None
        rechunked_pipeline = None  # built on first need: a resumed pass may need none
    from tqdm import tqdm

    failures = 0
    path = folder / REPLAY_FILE
    with (
        _Appender(path) as appender,
        tqdm(total=len(plan.tasks), desc="replaying", unit="s", disable=not progress) as bar,
    ):
        for target, oracle in plan.tasks:
            key = plan.keys.get((target.sample.id, oracle)) or _key(
                target, oracle, replayable, log, corpus_key
            )
            kept = done.get(key)
            if kept is not None:
                kept = kept.model_copy(update={"cached": True})  # no call made this pass
            else:
                cached = store.get_json(CACHE_KIND, key)
                if isinstance(cached, dict):
                    try:
                        kept = ReplayRecord.model_validate({**cached, "cached": True})
                    except ValueError:
                        kept = None
                if kept is None:
                    if oracle is Oracle.CHUNKING and rechunked_pipeline is None:
                        assert replayable.rebuild is not None
                        rechunked_pipeline = replayable.rebuild(corpora[Oracle.CHUNKING])
                    kept, failed = _run_task(
                        target, oracle, replayable, log, rechunked_pipeline, key
                    )
                    failures = failures + 1 if failed else 0
                    if failures >= FAILURES_IN_A_ROW:
                        appender.add(kept)
                        raise ReplayStopped(
                            f"the pipeline failed {failures} samples in a row (last: "
                            f"{kept.error}); the {len(records) + 1} replayed so far are kept "
                            f"in {path}: run again to resume"
                        )
                    if not failed:
                        store.put_json(CACHE_KIND, key, kept.model_dump(mode="json"))
                appender.add(kept)
            records[(target.sample.id, oracle)] = kept
            bar.update()
    scored_by: dict[Oracle, ScoreResult] = {}
    new_verdicts, answer_ok = score_replays(
        log, plan.targets, records, corpora, _config(result), keep=scored_by
    )
    written = write_replayed_runs(
        result, scored_by, folder, scores_dir=str(scores or run / "scores")
    )
    sources = {
        str(r.sample_id): (None if _missing(r.source) else str(r.source))
        for r in result.verdicts.itertuples()
    }
    scored = {sid: v for sid, v in verdict_of.items() if v not in NOT_REPLAYED}
    finished = ReplayRun(
        str(run),
        str(Path(scores) if scores is not None else run / "scores"),
        plan,
        records,
        new_verdicts,
        answer_ok,
        len(scored),
        scored,
        sources,
        replayable.has_reranker,
        folder,
        written,
    )
    from cofe.replay._summary import write_summary  # it reads a finished pass: no cycle

    write_summary(finished)  # what cofe report shows of the replay
    return finished


def _run_task(
    target: Target,
    oracle: Oracle,
    replayable: Replayable,
    log: RunLog,
    rechunked_pipeline: StagedPipeline | None,
    key: str,
) -> tuple[ReplayRecord, bool]:
    """One replay, timed; an exception of the pipeline is the record's error (a dead endpoint
    raises ``EndpointDown`` through, and the pass stops)."""
    from cofe.llm import EndpointUnreachable

    started = time.perf_counter()
    error = None
    pool = context = answer = None
    calls: dict[str, int] = {}
    try:
        pool, context, answer, calls = _replay_one(
            target, oracle, replayable, log, rechunked_pipeline
        )
    except EndpointUnreachable:
        raise
    except Exception as exc:  # one sample's failure is recorded, the pass goes on
        error = f"{type(exc).__name__}: {exc}"[:500]
    _check_endpoint(replayable)
    return (
        ReplayRecord(
            sample_id=target.sample.id,
            oracle=oracle,
            key=key,
            oracle_chunks=[c.chunk_id for c in target.oracle.chunks],
            spans=list(target.oracle.spans),
            pool=pool,
            context=context,
            answer=None if answer is None else scrub_surrogates(answer)[0],
            error=error,
            calls=calls,
            seconds=round(time.perf_counter() - started, 4),
        ),
        error is not None,
    )


def _check_endpoint(replayable: Replayable) -> None:
    """A dead LLM endpoint (calls in a row that could not reach it) stops the pass in one line."""
    for part in (replayable.pipeline.generate, replayable.pipeline.rerank):
        client = getattr(part, "client", None)
        check = getattr(client, "check_endpoint", None)
        if callable(check):
            check(kept="the samples replayed so far are kept: run again to resume")


# --- scoring the replays ------------------------------------------------------------------------


def score_replays(
    log: RunLog,
    targets: Sequence[Target],
    records: dict[tuple[str, Oracle], ReplayRecord],
    corpora: dict[Oracle, list[Chunk]],
    config: ScoreConfig,
    *,
    keep: dict[Oracle, ScoreResult] | None = None,
) -> tuple[dict[tuple[str, Oracle], str], dict[tuple[str, Oracle], bool]]:
    """Each oracle's replayed records scored as a run of their own (the run's documents and
    chunks, the oracle's span items, the new pool, context and answer), with the run's
    scoring settings: per (sample, oracle) the new verdict, and whether the answer step found
    every point in the new answer. ``keep``: filled with each oracle's scoring of its
    replayed samples (under their own ids)."""
    from cofe.stages import score_run

    by_id = {t.sample.id: t for t in targets}
    verdicts: dict[tuple[str, Oracle], str] = {}
    answer_ok: dict[tuple[str, Oracle], bool] = {}
    # one scoring for the oracles over the run's corpus (each replay a sample of its own,
    # "id@oracle": the corpus is normalised once), one for the re-chunked corpus
    groups = [
        [o for o in Oracle if o not in corpora],
        *([o] for o in corpora),
    ]
    for group in groups:
        mine = {(sid, o): r for (sid, o), r in records.items() if o in group and r.error is None}
        if not mine:
            continue
        base = (
            corpora.get(group[0], log.chunks.values()) if len(group) == 1 else log.chunks.values()
        )
        chunks = {c.chunk_id: c for c in base}
        replayed, samples = {}, []
        for (sid, oracle), r in mine.items():
            for chunk in by_id[sid].oracle.chunks:
                chunks.setdefault(chunk.chunk_id, chunk)
            ident = f"{sid}@{oracle.value}"
            samples.append(by_id[sid].sample.model_copy(update={"id": ident}))
            replayed[ident] = SampleRecord(
                sample_id=ident,
                pool=[RankedChunk(chunk_id=c) for c in r.pool] if r.pool is not None else None,
                context=(
                    [RankedChunk(chunk_id=c) for c in r.context] if r.context is not None else None
                ),
                answer=r.answer,
            )
        replay_log = RunLog(log.path, log.manifest, log.documents, chunks, replayed, [])
        scored = score_run(replay_log, EvalSet(samples, path=None), config)
        back = {f"{sid}@{o.value}": (sid, o) for sid, o in mine}
        for row in scored.verdicts.itertuples(index=False):
            verdicts[back[str(row.sample_id)]] = str(row.verdict)
        held: dict[str, bool] = {}
        for point in scored.points.itertuples(index=False):
            ident = str(point.sample_id)
            held[ident] = held.get(ident, True) and _held(point.answer)
        for ident, pair in back.items():
            answer_ok[pair] = held.get(ident, False)
        if keep is not None:
            keep.update(split_by_oracle(scored, group))
    return verdicts, answer_ok
