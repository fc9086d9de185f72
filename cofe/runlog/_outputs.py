"""What the scorer and the judge keep of each sample record (``CompactRecord``): the chunk ids,
the answer, the error -- compactly.

A ``SampleRecord`` holds one pydantic object per ranked chunk (30-40 per
sample); for a run of 100,000 samples that is millions of objects, gigabytes,
and garbage-collector passes over all of them. The scorer only reads the
ranked chunk *ids*, so records are streamed from ``samples.jsonl``, validated
one by one, and kept as ``CompactRecord``: tuples of shared ``ChunkRef`` objects
(one per distinct chunk id in the whole run), the answer, latency and error.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple

from cofe._errors import InputProblem
from cofe._progress import progress_bar
from cofe.chain import STEP_SPECS
from cofe.runlog._models import RankedChunk, SampleRecord, Stage, StageError
from cofe.runlog._store import SAMPLES, RunLog, read_corpus, read_keyed


class ChunkRef(NamedTuple):
    chunk_id: str


More = Mapping[str, tuple[ChunkRef, ...] | str]


class _NoMore(Mapping[str, tuple[ChunkRef, ...] | str]):
    """The ``more`` of a record without generic steps: one shared read-only empty mapping,
    which pickles as itself (records travel between processes when read in parallel)."""

    def __getitem__(self, key: str) -> tuple[ChunkRef, ...] | str:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __reduce__(self) -> str:
        return "_NOTHING"


_NOTHING: More = _NoMore()


@dataclass(frozen=True, slots=True)
class CompactRecord:
    """A ``SampleRecord`` as scoring and judging keep it (same field names): the chunk ids of
    its ranked lists as shared ``ChunkRef`` objects, the answer, latency and error -- one of
    the family of a query's records (``QueryOutputs``)."""

    sample_id: str
    pool: tuple[ChunkRef, ...] | None
    context: tuple[ChunkRef, ...] | None
    answer: str | None
    latency: Mapping[Stage, float]
    error: StageError | None
    # the outputs of the steps read generically (``MORE_FIELDS``), by field: a ranked list's
    # chunk ids or a text; a field the record leaves null is absent
    more: More = field(default_factory=lambda: _NOTHING)


# its old name, still read by the scorer's driver, the HTML report and the CLI
Outputs = CompactRecord


MORE_FIELDS: tuple[tuple[str, bool], ...] = tuple(
    (spec.field, spec.reads == "ranked")
    for spec in STEP_SPECS
    if spec.field is not None and spec.field not in {f.name for f in fields(CompactRecord)}
)
"""The ``SampleRecord`` fields of the steps ``cofe.chain`` declares beyond the pool, the
context and the answer (each with whether it holds chunk ids): kept in ``CompactRecord.more``."""


_CHUNK_ID = attrgetter("chunk_id")


class Refs(dict[str, ChunkRef]):
    """One shared ``ChunkRef`` per chunk id."""

    def __missing__(self, chunk_id: str) -> ChunkRef:
        ref = self[chunk_id] = ChunkRef(chunk_id)
        return ref

    def ranked(self, items: Iterable[RankedChunk] | None) -> tuple[ChunkRef, ...] | None:
        return None if items is None else tuple(map(self.__getitem__, map(_CHUNK_ID, items)))


def compact_record(record: SampleRecord, refs: Refs) -> CompactRecord:
    return CompactRecord(
        record.sample_id,
        refs.ranked(record.pool),
        refs.ranked(record.context),
        record.answer,
        record.latency,
        record.error,
        _more(record, refs) if MORE_FIELDS else _NOTHING,
    )


def _more(record: SampleRecord, refs: Refs) -> More:
    found: dict[str, tuple[ChunkRef, ...] | str] = {}
    for name, ranked in MORE_FIELDS:
        value = getattr(record, name)
        if value is not None:
            found[name] = (refs.ranked(value) or ()) if ranked else value
    return found or _NOTHING


def more_fields(record: SampleRecord) -> list[str]:
    """The ``MORE_FIELDS`` this record fills (for the run's shape: which steps it has)."""
    return [name for name, _ in MORE_FIELDS if getattr(record, name) is not None]


def compact(records: Mapping[str, SampleRecord]) -> dict[str, CompactRecord]:
    """Records already in memory (a ``RunLog`` built by hand)."""
    refs = Refs()
    return {sample_id: compact_record(r, refs) for sample_id, r in records.items()}


def stream_records(
    path: Path, problems: list[InputProblem], *, progress: bool = False
) -> dict[str, CompactRecord]:
    """``samples.jsonl`` read record by record (as ``read_run`` reads it: a resumed run's
    newest record of a sample counts), each kept as ``CompactRecord`` as soon as it is validated."""
    refs = Refs()
    bar = progress_bar(
        desc="reading records", unit=" records", disable=not progress, mininterval=0.5
    )

    def keep(record: SampleRecord) -> CompactRecord:
        bar.update()
        return compact_record(record, refs)

    with gc_paused(), bar:
        return read_keyed(path, SampleRecord, "sample_id", problems, last_wins=True, keep=keep)


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while building large acyclic structures: each collection
    would walk every object built so far, making a long read quadratic."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_compact(root: Path, *, progress: bool = False) -> tuple[RunLog, dict[str, CompactRecord]]:
    """A run directory: the corpus as ``read_run`` reads it (the log's ``records`` left empty),
    and the records streamed into ``CompactRecord``."""
    with gc_paused():
        log = read_corpus(root)
    records = stream_records(log.path / SAMPLES, log.problems, progress=progress)
    return log, records


def reorders(pool: Sequence[Any], context: Sequence[Any]) -> bool:
    """The context is not simply the pool's first items (by chunk id): something between
    them reordered or replaced what the retriever returned -- a reranker."""
    return [_id(c) for c in context] != [_id(c) for c in pool[: len(context)]]


def _id(item: Any) -> str:
    return item if isinstance(item, str) else str(item.chunk_id)


@dataclass
class RecordFacts:
    """What a run's shape needs to know of all its records: any pool, context or answer, the
    longest (gathered while reading them: the scorer never holds them all)."""

    has_pool: bool = False
    has_context: bool = False
    generated: bool = False  # an answer, or an error at generation
    longest_pool: int = 0
    longest_context: int = 0
    # some record's context is not the first items of its pool: something reordered or
    # replaced them (a reranker); a context that is always the pool's top-K is a plain cut
    reordered: bool = False
    more: set[str] = field(default_factory=set)  # the ``MORE_FIELDS`` some record fills

    def add(self, record: CompactRecord) -> None:
        if record.more:
            self.more.update(record.more)
        if record.pool is not None:
            self.has_pool = True
            self.longest_pool = max(self.longest_pool, len(record.pool))
        if record.context is not None:
            self.has_context = True
            self.longest_context = max(self.longest_context, len(record.context))
            if not self.reordered and record.pool is not None:
                self.reordered = reorders(record.pool, record.context)
        if record.answer is not None or (
            record.error is not None and record.error.stage is Stage.GENERATION
        ):
            self.generated = True


def errors_by_stage(records: Iterable[CompactRecord]) -> dict[str, int]:
    """How many records failed at each stage."""
    counts = dict.fromkeys((stage.value for stage in Stage), 0)
    for record in records:
        if record.error is not None:
            counts[record.error.stage.value] += 1
    return counts
