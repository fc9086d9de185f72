"""Scoring a run of any size in memory that does not grow with its samples (``cofe score``).

``score_run`` holds every record and every row; this scores the same run a
batch of eval-set samples at a time and writes each batch's rows straight to
the results folder, so memory is the corpus plus one batch:

1. one pass over ``samples.jsonl`` validates every line (bad lines are
   problems, a resumed run's newest record of a sample counts) and keeps, per
   record, 8 bytes of id hash and 8 of file offset, and what the run's shape
   needs (any pool, context or answer; the longest pool and context);
2. the corpus is read and normalised once;
3. the eval set is read a batch at a time: the batch's keywords are
   registered and looked up in the normalised corpus (one Aho-Corasick scan),
   its records are read back by offset, it is scored (on every core) and its
   rows appended to the results' temporary files; the summary adds up as it
   goes (:mod:`cofe.results._summary`);
4. the files are renamed into place, ``summary.json`` last.

The files are the same, row for row, as ``score_run(...).write(...)``
writes (tests/stages/test_stream.py). Fuzzy matching and runs with LLM
judgements are scored in memory (their look-ups are not batch-local).
"""

from __future__ import annotations

import gc
import hashlib
import os
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError
from tqdm import tqdm

from cofe._errors import InputError, InputProblem
from cofe._jsonl import _parse_slowly, read_jsonl
from cofe._parallel import default_workers
from cofe.evalset import EvalSample, EvalSet, file_sha256
from cofe.judges._judge import JUDGEMENTS
from cofe.results import scores_folder
from cofe.results._files import ScoresWriter
from cofe.results._summary import ProblemTally, ScoreSummary, SummaryAccumulator, latency_table
from cofe.runlog import SampleRecord, Stage
from cofe.runlog._store import SAMPLES, read_corpus
from cofe.stages._config import ScoreConfig
from cofe.stages._context import RunContext
from cofe.stages._records import Outputs, _Refs, gc_paused, outputs_of
from cofe.stages._scorer import (
    _PARALLEL_FROM,
    _label_problems,
    _score_samples,
    batch_result,
    latency_seconds,
    no_chunks_problem,
    say_indexing,
    score_run,
    table_problems,
    unknown_record,
)
from cofe.stages._shape import RecordFacts, RunShape, reorders

BATCH = 20_000
# a run with no more records than this is scored as one batch (no second read, no second
# corpus scan: the fastest, and its memory, about 1.5 GB at 100,000 x 30, is the ceiling a
# larger run's 20,000-sample batches stay under)
ONE_BATCH_UP_TO = 100_000
_NO_LATENCY = latency_table({})  # a batch's latencies are added to the summary as seconds
_STAGE_CODES = {stage: code for code, stage in enumerate(Stage)}


def id_hash(sample_id: str) -> int:
    digest = hashlib.blake2b(sample_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


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
) -> tuple[ScoreSummary, Path]:
    """Score a run directory into a results folder (default: ``RUN/scores[-settings]``);
    returns the summary and the folder. What ``cofe score`` does.

    ``batch_size``: samples scored together (default: the whole run up to 100,000 records,
    else 20,000; memory grows with the batch, never with the run; each batch costs one scan
    of the normalised corpus)."""
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    root = Path(run_dir)
    config = config or ScoreConfig()
    folder = Path(out) if out is not None else scores_folder(root, config)
    if config.fuzzy is not None or (root / JUDGEMENTS).exists():
        result = score_run(root, evalset, config, progress=progress, workers=workers,
                           cluster=cluster)  # fmt: skip
        return result.view(), result.write(folder, replace=replace)
    with gc_paused():  # millions of acyclic objects: collections would only walk them
        summary = _stream(root, evalset, config, folder, replace, progress, workers, cluster,
                          batch_size)  # fmt: skip
    return summary, folder


def _stream(root, evalset, config, folder, replace, progress, workers, cluster, batch_size):
    log = read_corpus(root)
    path = Path(evalset) if evalset is not None else log.evalset_path
    if not path.exists():
        raise InputError(
            InputProblem(str(path), None, None, "eval set not found (pass --evalset FILE)")
        )
    head = list(log.problems)
    records = RecordIndex.build(root / SAMPLES, head, progress,
                                keep_up_to=batch_size or ONE_BATCH_UP_TO)  # fmt: skip
    if batch_size is None:
        batch_size = max(records.count, BATCH) if records.kept is not None else BATCH
    shape = RunShape.from_facts(log, config, records.facts)
    shape.plan(config.measures)  # a measure this run cannot have fails before any scoring
    head += no_chunks_problem(log, shape)
    sha = file_sha256(path)
    if log.manifest.evalset_sha256 and sha != log.manifest.evalset_sha256:
        head.append(InputProblem(str(path), None, None,
            "this eval set differs from the one the run answered (manifest evalset_sha256); "
            "scores may not mean what you think"))  # fmt: skip
    if workers is None:
        workers = default_workers(records.count, _PARALLEL_FROM)
    if progress:
        say_indexing(log, records.count)
    ctx: RunContext | None = None  # built with the first batch: the corpus normalised once
    accumulated, tally = SummaryAccumulator(), ProblemTally()
    seen = SeenIds()
    shape_dict: dict[str, Any] = {}
    with ScoresWriter(folder, config, replace=replace) as writer:

        def report(problems: list[InputProblem]) -> None:
            tally.add(problems)
            writer.add_problems(problems)
            problems.clear()

        report(head)
        eval_problems: list[InputProblem] = []
        bar = tqdm(total=records.count, desc="scoring", unit="sample", disable=not progress,
                   mininterval=0.5)  # fmt: skip
        with bar:
            for samples, lines in _eval_batches(path, eval_problems, seen, batch_size):
                report(eval_problems)
                if ctx is None:  # normalise and scan the corpus in one pass
                    ctx = RunContext(log, samples, config, workers=workers)
                else:  # the next batch's keywords, in the normalised corpus
                    ctx.bind(samples)
                outputs = records.load(samples)
                evals = EvalSet(samples, [], str(path), lines)
                problems = _label_problems(evals, ctx)
                tables = _score_samples(ctx, shape, samples, outputs, workers, False, cluster)
                problems += table_problems(tables, evals)
                result = batch_result(config, log, shape, evals, tables, _NO_LATENCY, [],
                                      records=records.count, errors=records.errors)  # fmt: skip
                writer.add_rows(result)
                accumulated.add_tables(result)
                accumulated.add_latency(latency_seconds(outputs.values()))
                shape_dict = result.shape
                report(problems)
                bar.update(len(samples))
                del result, tables, outputs
                # the collector is paused for speed, and a batch's tables (pandas) hold
                # reference cycles: without this, each batch would leave them behind. The
                # youngest generation holds what was made since the last batch (survivors are
                # promoted), so this walks one batch's objects, not the corpus again
                gc.collect(0)
        report(eval_problems)
        if not seen.count:
            report([InputProblem(str(path), None, None,
                                 "the eval set holds no sample: nothing to score")])  # fmt: skip
            shape_dict = batch_result(config, log, shape, EvalSet([]), _empty_tables(), _NO_LATENCY,
                                      [], records=records.count, errors=records.errors).shape  # fmt: skip
        stray = records.not_in(seen)  # scored by nobody, but their latency counts (as in memory)
        accumulated.add_latency(latency_seconds(stray))
        report([unknown_record(log, record.sample_id) for record in stray])
        summary = ScoreSummary(config=config, run=str(root), run_id=log.manifest.run_id,
                               shape=shape_dict, evalset_sha256=sha, accumulated=accumulated,
                               problems=tally)  # fmt: skip
        writer.add_table("latency", summary.latency())  # from every batch's seconds
        writer.finish(summary.to_dict())
    return summary


def _empty_tables():
    from cofe.stages._tables import Tables

    return Tables()


def _eval_batches(
    path: Path, problems: list[InputProblem], seen: SeenIds, batch_size: int
) -> Iterator[tuple[list[EvalSample], dict[str, int]]]:
    """The eval set in file order, a batch at a time; bad lines and repeated ids (the first
    one counts, as ``read_evalset`` reads it) become problems."""
    batch: list[EvalSample] = []
    lines: dict[str, int] = {}
    for line, item in read_jsonl(path, EvalSample):
        if isinstance(item, InputProblem):
            problems.append(item)
            continue
        first = lines.get(item.id) or seen.line_of(id_hash(item.id))
        if first is not None:
            problems.append(InputProblem(str(path), line, "id",
                f"duplicate id {item.id!r} (first on line {first}); skipped"))  # fmt: skip
            continue
        batch.append(item)
        lines[item.id] = line
        if len(batch) >= batch_size:
            seen.add(lines)
            yield batch, lines
            batch, lines = [], {}
    if batch:
        seen.add(lines)
        yield batch, lines


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
    refs: _Refs = field(default_factory=_Refs)
    kept: dict[str, Outputs] | None = None  # every record, when they fit in one batch

    @property
    def count(self) -> int:
        return len(self.hashes)

    @classmethod
    def build(
        cls, path: Path, problems: list[InputProblem], progress: bool, keep_up_to: int = 0
    ) -> RecordIndex:
        """``keep_up_to``: a run with no more records than this (one batch) keeps them as read,
        so they are not read twice; a larger one is read back by offset, a batch at a time."""
        kept_outputs: dict[str, Outputs] | None = {} if keep_up_to else None
        refs = _Refs()
        hashes, offsets, lines = array("q"), array("q"), array("q")
        pools, contexts, flags = array("i"), array("i"), array("b")
        reordered = False  # some context is not its pool's first items (RecordFacts.reordered)
        name = str(path)
        size = path.stat().st_size if path.exists() else 0
        bar = tqdm(total=size, desc="reading records", unit="B", unit_scale=True,
                   disable=not progress, mininterval=0.5)  # fmt: skip
        offset = 0
        with bar, path.open("rb") if size else open(os.devnull, "rb") as handle:
            for line, raw in enumerate(handle, start=1):
                start, offset = offset, offset + len(raw)
                if line % 4096 == 0:
                    bar.update(offset - bar.n)
                if not raw.strip():
                    continue
                record = _parse(raw, name, line)
                if isinstance(record, InputProblem):
                    problems.append(record)
                    continue
                if kept_outputs is not None:  # the newest of a sample's records wins
                    kept_outputs[record.sample_id] = outputs_of(record, refs)
                    if len(kept_outputs) > keep_up_to:
                        kept_outputs = None  # too many to hold: read back by offset instead
                hashes.append(id_hash(record.sample_id))
                offsets.append(start)
                lines.append(line)
                pools.append(-1 if record.pool is None else len(record.pool))
                contexts.append(-1 if record.context is None else len(record.context))
                if not reordered and record.context is not None and record.pool is not None:
                    reordered = reorders(record.pool, record.context)
                error = record.error.stage if record.error is not None else None
                flags.append((record.answer is not None)
                             | ((error is Stage.GENERATION) << 1)
                             | ((_STAGE_CODES[error] + 1 if error else 0) << 2))  # fmt: skip
            bar.update(offset - bar.n)
        h = np.frombuffer(hashes, dtype=np.int64) if hashes else np.zeros(0, np.int64)
        order = np.argsort(h, kind="stable")  # equal ids keep file order: the last is newest
        h = h[order]
        newest = np.ones(len(h), dtype=bool)
        newest[:-1] = h[1:] != h[:-1]
        offset_of = np.frombuffer(offsets, np.int64)[order] if offsets else np.zeros(0, np.int64)
        line_of = np.frombuffer(lines, np.int64)[order] if lines else np.zeros(0, np.int64)
        index = cls(path, h[newest], offset_of[newest])
        for older in np.flatnonzero(~newest):  # a resumed run answered a sample again
            record = index._read(int(offset_of[older]))
            problems.append(InputProblem(name, int(line_of[older + 1]), "sample_id",
                f"duplicate sample_id {record.sample_id!r} (also on line {int(line_of[older])}); "
                "this one is kept"))  # fmt: skip
        kept = order[newest]
        index._gather_facts(kept, pools, contexts, flags, reordered)
        index.refs, index.kept = refs, kept_outputs
        return index

    def _gather_facts(self, kept: np.ndarray, pools, contexts, flags, reordered: bool) -> None:
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
                if isinstance(record, SampleRecord) and ids.get(id_hash(record.sample_id)) \
                        == record.sample_id:  # fmt: skip
                    out[record.sample_id] = outputs_of(record, self.refs)
        return {s.id: out[s.id] for s in samples if s.id in out}

    def not_in(self, seen: SeenIds) -> list[SampleRecord]:
        """Records whose sample is not in the eval set (read back: usually none)."""
        stray = self.offsets[~seen.holds(self.hashes)] if self.count else []
        return [self._read(int(offset)) for offset in np.sort(stray)]


def _parse(raw: bytes, name: str, line: int | None) -> SampleRecord | InputProblem:
    try:
        return SampleRecord.model_validate_json(raw)
    except ValidationError:
        return _parse_slowly(raw, SampleRecord, name, line or 0, not raw.endswith(b"\n"))
