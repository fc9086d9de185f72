"""The one scoring driver: a run scored a batch of eval-set samples at a time, its rows
handed to a sink -- the results folder (``score_to_folder``: what ``cofe score`` runs) or
memory (``score_run``: one ``ScoreResult``).

Memory is the corpus plus one batch (a folder sink; the memory sink holds every row):

1. one pass over ``samples.jsonl`` validates every line (bad lines are
   problems, a resumed run's newest record of a sample counts) and keeps, per
   record, 8 bytes of id hash and 8 of file offset, and what the run's shape
   needs (any pool, context or answer; the longest pool and context) -- or the
   records themselves when they fit in one batch (a ``RunLog`` in memory: its own);
2. the eval set is checked once (``_EvalSource``: missing, empty, not the one the
   run answered, bad lines, repeated ids) and read a batch at a time;
3. the corpus is read and normalised once; each batch's keywords are
   registered and looked up in it (one Aho-Corasick scan; fuzzy matching: the
   corpus-wide keywords only, the rest searched on demand), its records are
   read back by offset, its LLM judgements (``cofe judge``) looked up, it is
   scored (on every core) and its rows handed to the sink;
4. the sink finishes: a folder's files are renamed into place, ``summary.json``
   last (the summary added up batch by batch, :mod:`cofe.results._summary`);
   memory's batches become one ``ScoreResult``.

Batches of any size give the same rows (tests/stages/test_stream.py).
"""

from __future__ import annotations

import gc
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from dataclasses import replace as replaced
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cofe._errors import InputError, InputProblem
from cofe._jsonl import read_jsonl
from cofe._parallel import default_workers
from cofe._progress import progress_bar
from cofe.config import ScoreConfig
from cofe.evalset import EvalSample, EvalSet, file_sha256
from cofe.measures import ClaimLabels, Unscored
from cofe.results import (
    ProblemTally,
    Rows,
    ScoredRows,
    ScoreResult,
    ScoreSummary,
    ScoresWriter,
    SummaryAccumulator,
    latency_table,
    scores_folder,
)
from cofe.runlog import (  # the records: read and indexed there, scored here
    JUDGEMENTS,
    SAMPLES,
    CompactRecord,
    HeldRecords,
    RecordIndex,
    RunLog,
    SeenIds,
    compact,
    gc_paused,
    id_hash,
    read_corpus,
)
from cofe.stages._context import RunContext
from cofe.stages._scorer import (
    PARALLEL_FROM,
    batch_result,
    label_problems,
    latency_seconds,
    no_chunks_problem,
    run_shape,
    say_indexing,
    score_samples,
    table_problems,
    unknown_record,
)
from cofe.stages._shape import RunShape
from cofe.stages._tables import Tables

if TYPE_CHECKING:
    import pandas as pd

BATCH = 20_000
# a run with no more records than this is scored as one batch (no second read, no second
# corpus scan: the fastest, and its memory, about 1.5 GB at 100,000 x 30, is the ceiling a
# larger run's 20,000-sample batches stay under)
ONE_BATCH_UP_TO = 100_000
WHOLE = sys.maxsize  # score_run's batch: everything at once (its rows are all kept anyway)

Seconds = Mapping[str, Iterable[float]]


# The judge's labels of a judged run's answers, per sample (or why they cannot be used):
# passed in by the caller (cofe score passes cofe.judges.labels_for_scoring), so the scorer
# sits below the judge and never imports it.
LabelReader = Callable[
    [Path, RunLog, dict[str, CompactRecord], list[EvalSample]], dict[str, ClaimLabels | Unscored]
]


# --- the two ways in -------------------------------------------------------------------------


def score_run(
    run: str | os.PathLike[str] | RunLog,
    evalset: str | os.PathLike[str] | EvalSet | None = None,
    config: ScoreConfig | None = None,
    *,
    progress: bool = False,
    workers: int | None = None,
    cluster: Any = None,
    batch_size: int | None = None,
    labels: LabelReader | None = None,
) -> ScoreResult:
    """Score every stage of a recorded run against the eval set's keywords.

    ``run``: a run directory or a ``RunLog``; ``evalset``: a file or an ``EvalSet``
    (default: the run's). Bad records never stop scoring: they are listed in
    ``result.problems`` and the samples they concern are marked unscorable with the
    reason. ``workers`` processes score slices of the samples (default: one per core for
    large runs); ``cluster`` (a ``distributed.Client``) scores them on a Dask cluster
    instead. ``batch_size``: samples scored together (default: all of them); the rows are
    the same whatever it is. ``labels``: the judge's labels of a judged run
    (``cofe.judges.labels_for_scoring``); without it a judged run is scored as if unjudged,
    with a warning.
    """
    _check_batch_size(batch_size)
    sink = MemorySink()
    with gc_paused():  # millions of acyclic objects: collections would only walk them
        _drive(
            run,
            evalset,
            config or ScoreConfig(),
            sink,
            progress,
            workers,
            cluster,
            batch_size or WHOLE,
            labels,
        )
    assert sink.result is not None
    return sink.result


def score_to_folder(
    run_dir: str | os.PathLike[str],
    evalset: str | os.PathLike[str] | None = None,
    config: ScoreConfig | None = None,
    *,
    out: str | os.PathLike[str] | None = None,
    replace: bool = False,
    progress: bool = False,
    workers: int | None = None,
    cluster: Any = None,
    batch_size: int | None = None,
    labels: LabelReader | None = None,
) -> tuple[ScoreSummary, Path]:
    """Score a run directory into a results folder (default: ``RUN/scores[-settings]``);
    returns the summary and the folder. What ``cofe score`` does.

    ``batch_size``: samples scored together (default: the whole run up to 100,000 records,
    else 20,000; memory grows with the batch, never with the run; each batch costs one scan
    of the normalised corpus). ``labels``: as for ``score_run``."""
    _check_batch_size(batch_size)
    config = config or ScoreConfig()
    folder = Path(out) if out is not None else scores_folder(Path(run_dir), config)
    sink = FolderSink(folder, config, replace)
    with gc_paused():  # millions of acyclic objects: collections would only walk them
        _drive(Path(run_dir), evalset, config, sink, progress, workers, cluster, batch_size, labels)
    assert sink.summary is not None
    return sink.summary, folder


def _check_batch_size(batch_size: int | None) -> None:
    if batch_size is not None and batch_size < 1:
        raise InputError(f"batch_size must be at least 1, not {batch_size}")


# --- the sinks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Scoring:
    """What a sink is told of the scoring besides its rows."""

    config: ScoreConfig
    run: str
    run_id: str
    shape: dict[str, Any]
    evalset_sha256: str | None


class Sink(Protocol):
    """Where the driver hands what it scores: opened once the inputs are checked."""

    def open(self) -> None: ...
    def add_problems(self, problems: list[InputProblem]) -> None: ...
    def add_rows(self, rows: ScoredRows, seconds: Seconds) -> None: ...
    def add_latency(self, seconds: Seconds) -> None: ...
    def finish(self, scoring: Scoring) -> None: ...
    def close(self) -> None: ...


class FolderSink:
    """A results folder written a batch at a time (``ScoresWriter``, from the batch's
    columns: no DataFrame, no pandas); the summary adds up as it goes and is written last."""

    def __init__(self, folder: Path, config: ScoreConfig, replace: bool) -> None:
        self.folder, self.config, self.replace = folder, config, replace
        self.accumulated, self.tally = SummaryAccumulator(), ProblemTally()
        self.summary: ScoreSummary | None = None
        self._writer: ScoresWriter | None = None

    def open(self) -> None:
        writer = ScoresWriter(self.folder, self.config, replace=self.replace)
        self._writer = writer.__enter__()

    def add_problems(self, problems: list[InputProblem]) -> None:
        assert self._writer is not None
        self.tally.add(problems)
        self._writer.add_problems(problems)

    def add_rows(self, rows: ScoredRows, seconds: Seconds) -> None:
        assert self._writer is not None
        self._writer.add_rows(rows)
        self.accumulated.add_rows(rows)
        self.accumulated.add_latency(seconds)

    def add_latency(self, seconds: Seconds) -> None:
        self.accumulated.add_latency(seconds)

    def finish(self, scoring: Scoring) -> None:
        assert self._writer is not None
        self.summary = summary = ScoreSummary(
            config=scoring.config,
            run=scoring.run,
            run_id=scoring.run_id,
            shape=scoring.shape,
            evalset_sha256=scoring.evalset_sha256,
            accumulated=self.accumulated,
            problems=self.tally,
        )
        latency = Rows.of_tuples(
            "latency", summary.latency_rows(), ["stage", "mean", "p50", "p95", "n"]
        )
        self._writer.add_table(latency)  # from every batch's seconds
        self._writer.finish(summary.to_dict())

    def close(self) -> None:
        if self._writer is not None:
            self._writer.__exit__()


class MemorySink:
    """Every batch kept as DataFrames; at the end, concatenated into one ``ScoreResult``."""

    def __init__(self) -> None:
        self.parts: list[dict[str, pd.DataFrame]] = []
        self.problems: list[InputProblem] = []
        self.seconds: dict[str, list[float]] = {}
        self.result: ScoreResult | None = None

    def open(self) -> None:
        pass

    def add_problems(self, problems: list[InputProblem]) -> None:
        self.problems.extend(problems)

    def add_rows(self, rows: ScoredRows, seconds: Seconds) -> None:
        names = ("scores", "points", "verdicts", "skipped", "recalls")
        self.parts.append({name: getattr(rows, name).frame() for name in names})
        self.add_latency(seconds)

    def add_latency(self, seconds: Seconds) -> None:
        for stage, values in seconds.items():
            self.seconds.setdefault(stage, []).extend(values)

    def finish(self, scoring: Scoring) -> None:
        import pandas as pd  # only here: the folder sink (cofe score) never loads it

        tables: dict[str, pd.DataFrame] = {}
        for name in ("scores", "points", "verdicts", "skipped", "recalls"):
            frames = [part[name] for part in self.parts]
            tables[name] = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        self.result = ScoreResult(
            config=scoring.config,
            run=scoring.run,
            run_id=scoring.run_id,
            shape=scoring.shape,
            **tables,
            latency=latency_table(self.seconds),
            problems=self.problems,
            evalset_sha256=scoring.evalset_sha256,
        ).normalized()
        self.parts = []

    def close(self) -> None:
        pass


# --- the eval set ---------------------------------------------------------------------------


@dataclass
class _EvalSource:
    """The eval set to score: a file read a batch at a time, or an ``EvalSet`` already in
    memory; what is wrong with it as a whole, found once, before any batch."""

    name: str
    sha: str | None  # of the file scored against (None: in memory)
    items: Iterator[tuple[int | None, EvalSample | InputProblem]]
    problems: list[InputProblem]

    @classmethod
    def of(cls, evalset: str | os.PathLike[str] | EvalSet | None, log: RunLog) -> _EvalSource:
        if isinstance(evalset, EvalSet):  # read already: its own problems come with it
            lines = evalset.lines
            sha = (
                file_sha256(evalset.path) if evalset.path and Path(evalset.path).is_file() else None
            )
            return cls(
                str(evalset.path),
                sha,
                ((lines.get(s.id), s) for s in evalset.samples),
                list(evalset.problems),
            )
        path = Path(evalset) if evalset is not None else log.evalset_path
        if not path.exists():
            raise InputError(
                InputProblem(str(path), None, None, "eval set not found (pass --evalset FILE)")
            )
        sha = file_sha256(path)
        problems = []
        if log.manifest.evalset_sha256 and sha != log.manifest.evalset_sha256:
            problems.append(
                InputProblem(
                    str(path),
                    None,
                    None,
                    "this eval set differs from the one the run answered (manifest evalset_sha256); "
                    "scores may not mean what you think",
                )
            )
        return cls(str(path), sha, read_jsonl(path, EvalSample), problems)

    def batches(
        self, problems: list[InputProblem], seen: SeenIds, batch_size: int
    ) -> Iterator[EvalSet]:
        """The samples in order, a batch at a time; bad lines and repeated ids (the first one
        counts, as ``read_evalset`` reads it) become problems."""
        batch: list[EvalSample] = []
        ids: dict[str, int] = {}  # the batch's ids and their lines (0: not known)
        for line, item in self.items:
            if isinstance(item, InputProblem):
                problems.append(item)
                continue
            first = ids.get(item.id)
            if first is None and seen.count:
                first = seen.line_of(id_hash(item.id))
            if first is not None:
                where = f" (first on line {first})" if first else ""
                problems.append(
                    InputProblem(self.name, line, "id", f"duplicate id {item.id!r}{where}; skipped")
                )
                continue
            batch.append(item)
            ids[item.id] = line or 0
            if len(batch) >= batch_size:
                yield self._batch(batch, ids, seen)
                batch, ids = [], {}
        if batch:
            yield self._batch(batch, ids, seen)

    def _batch(self, samples: list[EvalSample], ids: dict[str, int], seen: SeenIds) -> EvalSet:
        seen.add(ids)
        return EvalSet(samples, [], self.name, {i: line for i, line in ids.items() if line})

    def empty(self) -> InputProblem:
        return InputProblem(self.name, None, None, "the eval set holds no sample: nothing to score")


# --- the driver -----------------------------------------------------------------------------


def _drive(
    run: Path | str | os.PathLike[str] | RunLog,
    evalset: str | os.PathLike[str] | EvalSet | None,
    config: ScoreConfig,
    sink: Sink,
    progress: bool,
    workers: int | None,
    cluster: Any,
    batch_size: int | None,
    labels: LabelReader | None,
) -> None:
    records: RecordIndex | HeldRecords
    if isinstance(run, RunLog):  # built in memory: its records are at hand, no judgements
        log, judged = run, False
        head = list(log.problems)
        evals = _EvalSource.of(evalset, log)
        records = HeldRecords.of(compact(run.records))
    else:
        root = Path(run)
        log = read_corpus(root)
        head = list(log.problems)
        evals = _EvalSource.of(evalset, log)  # a missing eval set fails before the records
        records = RecordIndex.build(
            root / SAMPLES, head, progress, keep_up_to=batch_size or ONE_BATCH_UP_TO
        )
        judged = (root / JUDGEMENTS).exists()
        if judged and labels is None:
            warnings.warn(
                f"{root} was judged ({JUDGEMENTS}), but no reader of the judge's labels was "
                "given: scored without them (pass labels=cofe.judges.labels_for_scoring)",
                stacklevel=3,
            )
            judged = False
    if batch_size is None:
        batch_size = max(records.count, BATCH) if records.kept is not None else BATCH
    shape = RunShape.from_facts(log, config, records.facts)
    if judged:
        shape = replaced(shape, judged=True)
    invalid = getattr(records, "invalid", None)
    if invalid:
        shape = replaced(shape, invalid_records=tuple(sorted(invalid.items())))
    shape.plan(config.measures)  # a measure this run cannot have fails before any scoring
    head += no_chunks_problem(log, shape)
    head += evals.problems
    if workers is None:
        workers = default_workers(records.count, PARALLEL_FROM)
    if progress:
        say_indexing(log, records.count)
    scoring = Scoring(
        config,
        str(log.path),
        log.manifest.run_id,
        run_shape(shape, records=records.count, errors=records.errors),
        evals.sha,
    )
    ctx: RunContext | None = None  # built with the first batch: the corpus normalised once
    seen = SeenIds()
    sink.open()
    try:

        def report(problems: list[InputProblem]) -> None:
            sink.add_problems(problems)
            problems.clear()

        report(head)
        eval_problems: list[InputProblem] = []
        bar = progress_bar(
            total=records.count,
            desc="scoring",
            unit="sample",
            disable=not progress,
            mininterval=0.5,
        )

        def done(bounds: tuple[int, int]) -> None:
            bar.update(bounds[1] - bounds[0])

        with bar:
            for batch in evals.batches(eval_problems, seen, batch_size):
                report(eval_problems)
                if ctx is None:  # normalise and scan the corpus in one pass
                    ctx = RunContext(log, batch.samples, config, workers=workers)
                else:
                    # the collector is paused for speed, and a batch's tables (the memory
                    # sink's DataFrames) hold reference cycles: without this, each batch would
                    # leave them behind.
                    # The youngest generation holds what was made since the last batch
                    # (survivors are promoted), so this walks one batch's objects
                    gc.collect(0)
                    ctx.bind(batch.samples)  # the next batch's keywords, in the same corpus
                outputs = records.load(batch.samples)
                if judged and labels is not None:  # the LLM judge's labels of this batch
                    ctx.claims = labels(log.path, log, outputs, batch.samples)
                problems = label_problems(batch, ctx)
                # each slice written as it comes: this process writes while the workers score
                for bounds, tables in score_samples(
                    ctx, shape, batch.samples, outputs, workers, done, cluster
                ):
                    problems += table_problems(tables, batch)
                    sink.add_rows(batch_result(batch, tables, bounds), {})
                    del tables
                sink.add_latency(latency_seconds(outputs.values()))
                report(problems)
                del outputs
        report(eval_problems)
        if not seen.count:
            report([evals.empty()])
            sink.add_rows(batch_result(EvalSet([]), Tables()), {})
        stray = records.not_in(seen)  # scored by nobody, but their latency counts
        sink.add_latency(latency_seconds(stray))
        report([unknown_record(log, record.sample_id) for record in stray])
        sink.finish(scoring)
    finally:
        sink.close()
