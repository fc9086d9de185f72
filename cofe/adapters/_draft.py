"""An adapter's record of one query while it is built (``RecordDraft``), and the registry
that names chunks."""

from __future__ import annotations

import hashlib
import threading
import time
import traceback
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from cofe._errors import InputError
from cofe.runlog import Chunk, RankedChunk, SampleRecord, Stage, StageError


class StageFailed(Exception):
    """A stage raised; the draft holds the error and later stages do not run."""


@dataclass
class RecordDraft:
    """The run-log record of one query (:class:`cofe.runlog.SampleRecord`) while an adapter
    builds it: the same fields but the sample id, which the runner gives (:meth:`record`);
    mutable, so each stage fills its part as it runs. ``stage()`` times a stage and records
    what it raised. Span-recorded pipelines fill it from the assembled trace
    (:meth:`cofe.adapters.TraceRecord.sample`): one family of records of a query
    (``cofe.runlog.QueryOutputs``)."""

    pool: list[RankedChunk] | None = None
    context: list[RankedChunk] | None = None
    answer: str | None = None
    latency: dict[Stage, float] = field(default_factory=dict)
    error: StageError | None = None

    @contextmanager
    def stage(self, stage: Stage) -> Iterator[None]:
        """Time a stage; an exception is recorded with its traceback and ends the query."""
        started = time.perf_counter()
        try:
            yield
        except StageFailed:
            raise
        except Exception as error:
            self.error = StageError(
                stage=stage,
                type=type(error).__name__,
                message=str(error)[:2000],
                traceback=traceback.format_exc(limit=20),
            )
            raise StageFailed from error
        finally:
            self.latency[stage] = round(time.perf_counter() - started, 6)

    @classmethod
    def of(cls, sample: SampleRecord) -> RecordDraft:
        """A run-log record as the draft an adapter returns (its sample id dropped)."""
        return cls(
            pool=sample.pool,
            context=sample.context,
            answer=sample.answer,
            latency=dict(sample.latency),
            error=sample.error,
        )

    def record(self, sample_id: str) -> SampleRecord:
        return SampleRecord(
            sample_id=sample_id,
            pool=self.pool,
            context=self.context,
            answer=self.answer,
            latency=self.latency,
            error=self.error,
        )


# its old name (``Pipeline.answer`` returned a ``Trace``): kept for pipelines written against
# it; it is not a trace (one query's spans, ``TraceRecord``) but a record being built
Trace = RecordDraft


def text_id(text: str) -> str:
    return "sha1:" + hashlib.sha1(text.encode()).hexdigest()[:16]


DERIVED_DOC = "(derived)"


def derived_item(item: dict[str, Any]) -> Chunk:
    """A ranked dict with ``kind``/``derived_from`` as a derived item: ``text`` required; the
    id made from its text and sources when not given; the document ``(derived)`` when not
    given (scoring uses its sources' documents)."""
    fields = {k: v for k, v in item.items() if k not in ("score", "id")}
    text = fields.get("text")
    if not isinstance(text, str):
        raise InputError(f"derived item {item!r:.80} carries no text")
    sources = fields.get("derived_from") or []
    ident = fields.get("chunk_id") or item.get("id")
    fields["chunk_id"] = ident or text_id(text + "\n" + "\n".join(map(str, sources)))
    fields.setdefault("doc_id", DERIVED_DOC)
    return Chunk.model_validate(fields)


class ChunkRegistry:
    """The chunk corpus, found by id or by text.

    A pipeline may return chunk ids, chunk texts or objects carrying either;
    texts not seen at chunking time get a content id and are kept in ``new``
    so the runner can append them to ``chunks.jsonl``.
    """

    def __init__(self, chunks: Iterable[Chunk] = ()) -> None:
        self.chunks: list[Chunk] = []
        self.by_id: dict[str, Chunk] = {}
        self._by_text: dict[str, str] = {}
        self._new: list[Chunk] = []
        self._lock = threading.Lock()
        for chunk in chunks:
            self._add(chunk)

    def _add(self, chunk: Chunk) -> None:
        if chunk.chunk_id in self.by_id:
            raise InputError(f"two chunks have the id {chunk.chunk_id!r}")
        self.chunks.append(chunk)
        self.by_id[chunk.chunk_id] = chunk
        self._by_text.setdefault(chunk.text, chunk.chunk_id)

    def __len__(self) -> int:
        return len(self.chunks)

    def resolve(self, item: Any) -> tuple[str, float | None]:
        """(chunk id, score) of one ranked item, registering unseen texts."""
        score = None
        if isinstance(item, tuple) and len(item) == 2:
            item, score = item
        if isinstance(item, Chunk):
            with self._lock:
                if item.chunk_id not in self.by_id:
                    self._add(item)
                    self._new.append(item)
            return item.chunk_id, score
        if isinstance(item, RankedChunk):
            return item.chunk_id, item.score if score is None else score
        elif isinstance(item, dict):
            if "kind" in item or "derived_from" in item:  # a derived item (summary, relation...)
                return self.resolve((derived_item(item), item.get("score", score)))
            ident = item.get("chunk_id") or item.get("id")
            text = item.get("text")
            score = item.get("score", score)
        elif isinstance(item, str):
            if item in self.by_id:
                return item, score
            ident, text = None, item
        else:
            ident = getattr(item, "chunk_id", None) or getattr(item, "id", None)
            text = getattr(item, "text", None)
            score = getattr(item, "score", score)
        if ident is not None and ident in self.by_id:
            return ident, score
        if text is None:
            raise InputError(
                f"ranked item {item!r:.80} names no known chunk id and carries no text"
            )
        with self._lock:
            known = self._by_text.get(text)
            if known is not None:
                return known, score
            chunk = Chunk(
                chunk_id=ident or text_id(text),
                doc_id="(unknown)",
                text=text,
                meta={"registered": "first seen in a ranked list"},
            )
            self._add(chunk)
            self._new.append(chunk)
            return chunk.chunk_id, score

    def ranked(self, items: Iterable[Any]) -> list[RankedChunk]:
        by_id = self.by_id
        out = []
        for original in items:
            item, score = original, None
            if type(item) is tuple and len(item) == 2:
                item, score = item
            # fast paths (the common case on every query): a known chunk or chunk id
            if type(item) is Chunk and by_id.get(item.chunk_id) is item:
                ident = item.chunk_id
            elif type(item) is str and item in by_id:
                ident = item
            else:
                ident, score = self.resolve(original)
            out.append(RankedChunk(chunk_id=ident, score=None if score is None else float(score)))
        return out

    def take_new(self) -> list[Chunk]:
        with self._lock:
            new, self._new = self._new, []
        return new
