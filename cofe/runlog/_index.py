"""Where each sample's record is in ``samples.jsonl``: the run log's records indexed for
reading a batch at a time (the scorer's driver, ``cofe.stages``, reads them through this).

One pass validates every line (bad lines are problems, a resumed run's newest record of a
sample counts) and keeps, per record, 8 bytes of id hash and 8 of file offset, and what the
run's shape needs (``RecordFacts``) -- or the records themselves, as ``CompactRecord``, when they
fit in one batch. A large file is read in parts on every core. Imported on first use
(``cofe.runlog``'s lazy names): numpy is not loaded by reading a manifest.
"""

from __future__ import annotations

import ctypes
import hashlib
import re
from array import array
from dataclasses import dataclass, field
from dataclasses import replace as replaced
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import ValidationError

from cofe._errors import InputProblem
from cofe._jsonl import parse_slowly
from cofe._parallel import default_workers, fork_imap
from cofe._progress import Bar, progress_bar
from cofe.runlog._models import SampleRecord, Stage
from cofe.runlog._outputs import (
    MORE_FIELDS,
    CompactRecord,
    RecordFacts,
    Refs,
    compact_record,
    errors_by_stage,
    more_fields,
    reorders,
)

if TYPE_CHECKING:
    from cofe.evalset import EvalSample

_STAGE_CODES = {stage: code for code, stage in enumerate(Stage)}


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
    kept: dict[str, CompactRecord] | None = None
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


def _advance(bar: Bar, part: tuple[int, int]) -> None:
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
                kept[record.sample_id] = compact_record(record, refs)
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
    kept: dict[str, CompactRecord] | None = None  # every record, when they fit in one batch
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
        bar = progress_bar(
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
        workers = default_workers(size, PARALLEL_BYTES)
        if workers > 1:  # shared memory on any platform
            from multiprocessing.sharedctypes import RawValue

            keeping = RawValue(ctypes.c_bool, True)
        else:  # one process (most runs): no multiprocessing to load for a flag
            keeping = ctypes.c_bool(True)
        with bar:
            for (part_number, _), part in fork_imap(
                _read_part,
                (path, bounds, keep_up_to, keeping),
                len(bounds),
                slice_size=1,
                workers=workers,
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

    def load(self, samples: list[EvalSample]) -> dict[str, CompactRecord]:
        """The records of these samples (those that have one), read back by offset."""
        if not self.count:
            return {}
        if self.kept is not None:
            return {s.id: self.kept[s.id] for s in samples if s.id in self.kept}
        wanted = np.fromiter((id_hash(s.id) for s in samples), np.int64, count=len(samples))
        at = np.minimum(np.searchsorted(self.hashes, wanted), self.count - 1)
        found = self.hashes[at] == wanted
        ids = {int(h): s.id for h, s in zip(wanted, samples, strict=True)}
        out: dict[str, CompactRecord] = {}
        with self.path.open("rb") as handle:
            for position in np.sort(self.offsets[at[found]]):  # in file order: one sweep
                handle.seek(int(position))
                record = _parse(handle.readline(), str(self.path), None)
                if (
                    isinstance(record, SampleRecord)
                    and ids.get(id_hash(record.sample_id)) == record.sample_id
                ):
                    out[record.sample_id] = compact_record(record, self.refs)
        return {s.id: out[s.id] for s in samples if s.id in out}

    def not_in(self, seen: SeenIds) -> list[CompactRecord]:
        """Records whose sample is not in the eval set (read back: usually none)."""
        stray = self.offsets[~seen.holds(self.hashes)] if self.count else []
        return [compact_record(self._read(int(offset)), self.refs) for offset in np.sort(stray)]


@dataclass
class HeldRecords:
    """A run's records already in memory (a ``RunLog`` built by hand), read as a
    ``RecordIndex`` is."""

    kept: dict[str, CompactRecord]
    facts: RecordFacts
    errors: dict[str, int]

    @classmethod
    def of(cls, records: dict[str, CompactRecord]) -> HeldRecords:
        facts = RecordFacts()
        for record in records.values():
            facts.add(record)
        return cls(records, facts, errors_by_stage(records.values()))

    @property
    def count(self) -> int:
        return len(self.kept)

    def load(self, samples: list[EvalSample]) -> dict[str, CompactRecord]:
        kept = self.kept
        return {s.id: kept[s.id] for s in samples if s.id in kept}

    def not_in(self, seen: SeenIds) -> list[CompactRecord]:
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
