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

import ctypes
import gc
import hashlib
import os
import re
import sys
import warnings
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from dataclasses import replace as replaced
from itertools import pairwise
from multiprocessing.sharedctypes import RawValue
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from pydantic import ValidationError
from tqdm import tqdm

from cofe._errors import InputError, InputProblem
from cofe._jsonl import parse_slowly, read_jsonl
from cofe._parallel import default_workers, fork_imap
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
from cofe.runlog import (  # the compact records: read there, kept here
    JUDGEMENTS,
    MORE_FIELDS,
    SAMPLES,
    Outputs,
    Refs,
    RunLog,
    SampleRecord,
    Stage,
    compact,
    gc_paused,
    more_fields,
    outputs_of,
    read_corpus,
)
from cofe.stages._context import RunContext
from cofe.stages._scorer import (
    PARALLEL_FROM,
    batch_result,
    errors_by_stage,
    label_problems,
    latency_seconds,
    no_chunks_problem,
    run_shape,
    say_indexing,
    score_samples,
    table_problems,
    unknown_record,
)
from cofe.stages._shape import RecordFacts, RunShape, reorders
from cofe.stages._tables import Tables

if TYPE_CHECKING:
    import pandas as pd

BATCH = 20_000
# a run with no more records than this is scored as one batch (no second read, no second
# corpus scan: the fastest, and its memory, about 1.5 GB at 100,000 x 30, is the ceiling a
# larger run's 20,000-sample batches stay under)
ONE_BATCH_UP_TO = 100_000
WHOLE = sys.maxsize  # score_run's batch: everything at once (its rows are all kept anyway)
_STAGE_CODES = {stage: code for code, stage in enumerate(Stage)}

Seconds = Mapping[str, Iterable[float]]


def id_hash(sample_id: str) -> int:
    digest = hashlib.blake2b(sample_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


PARALLEL_BYTES = 16 << 20  # samples.jsonl from this size on is read on every core
_PART_BYTES = 16 << 20  # a part of the file read at once: small enough for a moving progress bar


def _parts(path: Path, size: int) -> list[tuple[int, int]]:
    """The file cut into byte ranges of about ``_PART_BYTES``, each ending after a newline."""
    if size <= _PART_BYTES:
        return [(0, size)]
    cuts = [0]
    with path.open("rb") as handle:
        while cuts[-1] + _PART_BYTES < size:
            handle.seek(cuts[-1] + _PART_BYTES)
            handle.readline()  # to the end of the line the cut fell in
            cuts.append(min(handle.tell(), size))
    if cuts[-1] < size:
        cuts.append(size)
    return list(pairwise(cuts))


@dataclass
class _RecordPart:
    """What reading a part of ``samples.jsonl`` found: per valid record, its id hash, offset
    and line (lines counted from the part's start until joined) and the facts the run's shape
    needs; the problems; the records themselves while they fit in one batch."""

    hashes: array[int] = field(default_factory=lambda: array("q"))
    offsets: array[int] = field(default_factory=lambda: array("q"))
    lines: array[int] = field(default_factory=lambda: array("q"))
    pools: array[int] = field(default_factory=lambda: array("i"))
    contexts: array[int] = field(default_factory=lambda: array("i"))
    flags: array[int] = field(default_factory=lambda: array("b"))
    reordered: bool = False  # some context is not its pool's first items (RecordFacts.reordered)
    more: set[str] = field(default_factory=set)  # RecordFacts.more
    problems: list[InputProblem] = field(default_factory=list)
    kept: dict[str, Outputs] | None = None
    refs: Refs = field(default_factory=Refs)
    line_count: int = 0
    # the sample ids of invalid records that name one, with their line: such a sample is
    # unscorable because its record was invalid, not because the pipeline did not answer
    invalid: dict[str, int] = field(default_factory=dict)

    def add(self, part: _RecordPart, keep_up_to: int) -> None:
        """Append the next part of the file, as one reading would have gone on: lines
        numbered on, the newest of a sample's kept records winning."""
        before = self.line_count
        self.hashes.extend(part.hashes)
        self.offsets.extend(part.offsets)
        self.lines.extend(line + before for line in part.lines)
        self.pools.extend(part.pools)
        self.contexts.extend(part.contexts)
        self.flags.extend(part.flags)
        self.reordered = self.reordered or part.reordered
        self.more |= part.more
        self.problems += [
            replaced(p, line=p.line + before) if p.line is not None else p for p in part.problems
        ]
        if self.kept is not None and part.kept is not None:
            self.kept.update(part.kept)
            if len(self.kept) > keep_up_to:
                self.kept = None  # too many to hold: read back by offset instead
        else:
            self.kept = None
        self.refs.update(part.refs)
        self.invalid.update((sid, line + before) for sid, line in part.invalid.items())
        self.line_count += part.line_count


# the sample id an invalid record names, read without parsing it (it failed to parse)
_SAMPLE_ID = re.compile(rb'"sample_id"\s*:\s*"((?:[^"\\]|\\.){1,512})"')


def _advance(bar: tqdm[Any], part: tuple[int, int]) -> None:
    bar.update(part[1] - part[0])


def _read_part(
    state: tuple[Path, list[tuple[int, int]], int, ctypes.c_bool], which: tuple[int, int]
) -> _RecordPart:
    """Read and validate one part of ``samples.jsonl`` (``RecordIndex.build``); ``keeping``
    (shared with the reader joining the parts) turns false once the run is too large to hold."""
    path, bounds, keep_up_to, keeping = state
    start, end = bounds[which[0]]
    part = _RecordPart(kept={} if keep_up_to else None)
    if start == end:  # an empty or missing file (a run that answered nothing yet)
        return part
    refs, kept = part.refs, part.kept
    name = str(path)
    with path.open("rb") as handle:
        handle.seek(start)
        offset, line = start, 0
        while offset < end:
            raw = handle.readline()
            if not raw:
                break
            line += 1
            at, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            record = _parse(raw, name, line)
            if isinstance(record, InputProblem):
                part.problems.append(record)
                named = _SAMPLE_ID.search(raw)
                if named is not None:
                    part.invalid[named[1].decode("utf-8", "replace")] = line
                continue
            if kept is not None:  # the newest of a sample's records wins
                kept[record.sample_id] = outputs_of(record, refs)
                if len(kept) > keep_up_to or not keeping.value:
                    kept = part.kept = None  # too many to hold: read back by offset instead
            part.hashes.append(id_hash(record.sample_id))
            part.offsets.append(at)
            part.lines.append(line)
            part.pools.append(-1 if record.pool is None else len(record.pool))
            part.contexts.append(-1 if record.context is None else len(record.context))
            if not part.reordered and record.context is not None and record.pool is not None:
                part.reordered = reorders(record.pool, record.context)
            if MORE_FIELDS:
                part.more.update(more_fields(record))
            error = record.error.stage if record.error is not None else None
            part.flags.append(
                (record.answer is not None)
                | ((error is Stage.GENERATION) << 1)
                | ((_STAGE_CODES[error] + 1 if error else 0) << 2)
            )
    part.line_count = line
    return part


# The judge's labels of a judged run's answers, per sample (or why they cannot be used):
# passed in by the caller (cofe score passes cofe.judges.labels_for_scoring), so the scorer
# sits below the judge and never imports it.
LabelReader = Callable[
    [Path, RunLog, dict[str, Outputs], list[EvalSample]], dict[str, ClaimLabels | Unscored]
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
        bar = tqdm(
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


class SeenIds:
    """Ids met so far, as sorted 64-bit hashes with their lines: 16 bytes an id, no strings."""

    def __init__(self) -> None:
        self.hashes = np.zeros(0, dtype=np.int64)
        self.lines = np.zeros(0, dtype=np.int64)

    @property
    def count(self) -> int:
        return len(self.hashes)

    def add(self, lines: dict[str, int]) -> None:
        hashes = np.fromiter((id_hash(i) for i in lines), dtype=np.int64, count=len(lines))
        both = np.concatenate([self.hashes, hashes])
        order = np.argsort(both, kind="stable")
        self.hashes = both[order]
        self.lines = np.concatenate([self.lines, np.fromiter(lines.values(), np.int64)])[order]

    def line_of(self, hashed: int) -> int | None:
        at = int(np.searchsorted(self.hashes, hashed))
        if at < len(self.hashes) and self.hashes[at] == hashed:
            return int(self.lines[at])
        return None

    def holds(self, hashes: np.ndarray) -> np.ndarray:
        at = np.minimum(np.searchsorted(self.hashes, hashes), max(len(self.hashes) - 1, 0))
        return (self.hashes[at] == hashes) if len(self.hashes) else np.zeros(len(hashes), bool)


@dataclass
class RecordIndex:
    """Where each sample's newest valid record is in ``samples.jsonl``, and what the run's
    shape needs to know of them all."""

    path: Path
    hashes: np.ndarray  # sorted, one per sample
    offsets: np.ndarray
    facts: RecordFacts = field(default_factory=RecordFacts)
    errors: dict[str, int] = field(default_factory=dict)
    refs: Refs = field(default_factory=Refs)
    kept: dict[str, Outputs] | None = None  # every record, when they fit in one batch
    invalid: dict[str, int] = field(default_factory=dict)  # _RecordPart.invalid, whole file

    @property
    def count(self) -> int:
        return len(self.hashes)

    @classmethod
    def build(
        cls, path: Path, problems: list[InputProblem], progress: bool, keep_up_to: int = 0
    ) -> RecordIndex:
        """``keep_up_to``: a run with no more records than this (one batch) keeps them as read,
        so they are not read twice; a larger one is read back by offset, a batch at a time.

        A large file is read in parts on every core (validating a record is most of the
        cost); the parts are put together in file order, as one reading would."""
        name = str(path)
        size = path.stat().st_size if path.exists() else 0
        bar = tqdm(
            total=size,
            desc="reading records",
            unit="B",
            unit_scale=True,
            disable=not progress,
            mininterval=0.5,
        )
        bounds = _parts(path, size)
        whole = _RecordPart(kept={} if keep_up_to else None)
        # the parts join as they come, so a run too large to hold is never held: once it
        # is known to be, the workers stop keeping records too
        keeping = RawValue(ctypes.c_bool, True)  # shared memory on any platform
        with bar:
            for (part_number, _), part in fork_imap(
                _read_part,
                (path, bounds, keep_up_to, keeping),
                len(bounds),
                slice_size=1,
                workers=default_workers(size, PARALLEL_BYTES),
            ):
                whole.add(part, keep_up_to)
                if whole.kept is None:
                    keeping.value = False
                _advance(bar, bounds[part_number])
        problems += whole.problems
        h = np.frombuffer(whole.hashes, dtype=np.int64) if whole.hashes else np.zeros(0, np.int64)
        order = np.argsort(h, kind="stable")  # equal ids keep file order: the last is newest
        h = h[order]
        newest = np.ones(len(h), dtype=bool)
        newest[:-1] = h[1:] != h[:-1]
        offsets, lines = whole.offsets, whole.lines
        offset_of = np.frombuffer(offsets, np.int64)[order] if offsets else np.zeros(0, np.int64)
        line_of = np.frombuffer(lines, np.int64)[order] if lines else np.zeros(0, np.int64)
        index = cls(path, h[newest], offset_of[newest])
        for older in np.flatnonzero(~newest):  # a resumed run answered a sample again
            record = index._read(int(offset_of[older]))
            problems.append(
                InputProblem(
                    name,
                    int(line_of[older + 1]),
                    "sample_id",
                    f"duplicate sample_id {record.sample_id!r} (also on line {int(line_of[older])}); "
                    "this one is kept",
                )
            )
        kept = order[newest]
        index._gather_facts(kept, whole.pools, whole.contexts, whole.flags, whole.reordered)
        index.facts.more = whole.more
        index.refs, index.kept = whole.refs, whole.kept
        index.invalid = whole.invalid
        return index

    def _gather_facts(
        self,
        kept: np.ndarray,
        pools: array[int],
        contexts: array[int],
        flags: array[int],
        reordered: bool,
    ) -> None:
        pool = np.frombuffer(pools, np.int32)[kept] if pools else np.zeros(0, np.int32)
        context = np.frombuffer(contexts, np.int32)[kept] if contexts else np.zeros(0, np.int32)
        flag = np.frombuffer(flags, np.int8)[kept] if flags else np.zeros(0, np.int8)
        self.facts = RecordFacts(
            has_pool=bool((pool >= 0).any()),
            has_context=bool((context >= 0).any()),
            generated=bool((flag & 3).any()),
            longest_pool=int(pool.max(initial=0)),
            longest_context=int(context.max(initial=0)),
            reordered=reordered,
        )
        codes = np.bincount((flag >> 2).astype(np.int64), minlength=len(Stage) + 1)
        self.errors = {stage.value: int(codes[code + 1]) for stage, code in _STAGE_CODES.items()}

    def _read(self, offset: int) -> SampleRecord:
        with self.path.open("rb") as handle:
            handle.seek(offset)
            raw = handle.readline()
        record = _parse(raw, str(self.path), None)
        assert isinstance(record, SampleRecord), "a line validated before no longer does"
        return record

    def load(self, samples: list[EvalSample]) -> dict[str, Outputs]:
        """The records of these samples (those that have one), read back by offset."""
        if not self.count:
            return {}
        if self.kept is not None:
            return {s.id: self.kept[s.id] for s in samples if s.id in self.kept}
        wanted = np.fromiter((id_hash(s.id) for s in samples), np.int64, count=len(samples))
        at = np.minimum(np.searchsorted(self.hashes, wanted), self.count - 1)
        found = self.hashes[at] == wanted
        ids = {int(h): s.id for h, s in zip(wanted, samples, strict=True)}
        out: dict[str, Outputs] = {}
        with self.path.open("rb") as handle:
            for position in np.sort(self.offsets[at[found]]):  # in file order: one sweep
                handle.seek(int(position))
                record = _parse(handle.readline(), str(self.path), None)
                if (
                    isinstance(record, SampleRecord)
                    and ids.get(id_hash(record.sample_id)) == record.sample_id
                ):
                    out[record.sample_id] = outputs_of(record, self.refs)
        return {s.id: out[s.id] for s in samples if s.id in out}

    def not_in(self, seen: SeenIds) -> list[Outputs]:
        """Records whose sample is not in the eval set (read back: usually none)."""
        stray = self.offsets[~seen.holds(self.hashes)] if self.count else []
        return [outputs_of(self._read(int(offset)), self.refs) for offset in np.sort(stray)]


@dataclass
class HeldRecords:
    """A run's records already in memory (a ``RunLog`` built by hand), read as a
    ``RecordIndex`` is."""

    kept: dict[str, Outputs]
    facts: RecordFacts
    errors: dict[str, int]

    @classmethod
    def of(cls, records: dict[str, Outputs]) -> HeldRecords:
        facts = RecordFacts()
        for record in records.values():
            facts.add(record)
        return cls(records, facts, errors_by_stage(records.values()))

    @property
    def count(self) -> int:
        return len(self.kept)

    def load(self, samples: list[EvalSample]) -> dict[str, Outputs]:
        kept = self.kept
        return {s.id: kept[s.id] for s in samples if s.id in kept}

    def not_in(self, seen: SeenIds) -> list[Outputs]:
        """Records whose sample is not in the eval set, in the run's order."""
        if not self.kept:
            return []
        hashes = np.fromiter((id_hash(i) for i in self.kept), np.int64, count=len(self.kept))
        held = seen.holds(hashes)
        return [record for record, h in zip(self.kept.values(), held, strict=True) if not h]


def _parse(raw: bytes, name: str, line: int | None) -> SampleRecord | InputProblem:
    try:
        return SampleRecord.model_validate_json(raw)
    except ValidationError:
        return parse_slowly(raw, SampleRecord, name, line or 0, not raw.endswith(b"\n"))
