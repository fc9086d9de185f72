"""The adapters' way in: a pipeline whose every answer is written to the store.

``watch(pipeline, store)`` wraps any cofe pipeline (``PythonPipeline``,
``LlamaIndexPipeline``, the built-in one): each ``answer(query)`` is recorded as
one trace, with the chunk texts from the pipeline's registry -- no spans and no
collector needed, the same stage records and signals as traced traffic.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cofe.adapters import Trace, pipeline_shape
from cofe.adapters._trace import text_id
from cofe.monitor._assemble import Doc, TraceRecord
from cofe.monitor.store import TRAFFIC, MonitorStore
from cofe.runlog import Chunk, RankedChunk, SampleRecord, Stage


def _docs(ranked: Sequence[RankedChunk] | None, chunks: Mapping[str, Chunk]) -> list[Doc] | None:
    if ranked is None:
        return None
    out = []
    for r in ranked:
        chunk = chunks.get(r.chunk_id)
        text = chunk.text if chunk is not None else None
        out.append(Doc(text_id(text) if text is not None else f"id:{r.chunk_id}", r.score,
                       r.chunk_id, text, len(text) if text is not None else None))  # fmt: skip
    return out


def record_of(
    trace_id: str,
    query: str,
    sample: SampleRecord,
    chunks: Mapping[str, Chunk],
    *,
    started_ns: int,
    ended_ns: int,
    stages: Sequence[Stage] | None,
    top_k: int | None,
) -> TraceRecord:
    """A run-log record (what an adapter produced for one query) as a stored trace."""
    pool = _docs(sample.pool, chunks)
    context = _docs(sample.context, chunks)
    if context is None and pool is not None and top_k is not None:
        context = pool[:top_k]  # no reranker: the generator received the pool's top-K
    seen = [s for s in (Stage.RETRIEVAL, Stage.RERANKING, Stage.GENERATION)
            if s in sample.latency or (stages is not None and s in stages
                                       and sample.error is None)]  # fmt: skip
    error = sample.error
    return TraceRecord(
        trace_id=trace_id,
        started_ns=started_ns,
        ended_ns=ended_ns,
        query=query,
        pool=pool,
        context=context,
        answer=sample.answer,
        latency={s: v for s, v in sample.latency.items()
                 if s in (Stage.RETRIEVAL, Stage.RERANKING, Stage.GENERATION)},
        stages=tuple(seen),
        error_stage=error.stage if error else None,
        error=f"{error.type}: {error.message}" if error else None,
    )


class WatchedPipeline:
    """A pipeline that records every answer in the store (and otherwise behaves the same)."""

    def __init__(self, pipeline: Any, store: MonitorStore, origin: str = TRAFFIC,
                 clock: Callable[[], int] = time.time_ns) -> None:  # fmt: skip
        self.pipeline, self.store, self.origin, self.clock = pipeline, store, origin, clock
        self._lock = threading.Lock()  # one writer to the store at a time

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pipeline, name)

    def answer(self, query: str, *, trace_id: str | None = None) -> Trace:
        started = self.clock()
        began = time.perf_counter()
        trace: Trace = self.pipeline.answer(query)
        ended = started + int((time.perf_counter() - began) * 1e9)
        shape = pipeline_shape(self.pipeline, self.pipeline.describe())
        ident = trace_id or uuid.uuid4().hex
        registry = getattr(self.pipeline, "registry", None)
        chunks = registry.by_id if registry is not None else {}
        record = record_of(ident, query, trace.record(ident), chunks, started_ns=started,
                           ended_ns=ended, stages=shape.stages, top_k=shape.top_k)  # fmt: skip
        with self._lock:
            self.store.add_traces([record], origin=self.origin)
        return trace


def watch(pipeline: Any, store: MonitorStore, *, origin: str = TRAFFIC,
          clock: Callable[[], int] = time.time_ns) -> WatchedPipeline:  # fmt: skip
    """Wrap ``pipeline`` so that each ``answer(query)`` is stored as a trace (``clock``: when
    a query started, in nanoseconds -- a replay in compressed time passes its own)."""
    return WatchedPipeline(pipeline, store, origin, clock)
