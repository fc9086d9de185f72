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
from collections.abc import Callable
from typing import Any

from cofe.adapters import RecordDraft, TraceRecord, pipeline_shape
from cofe.monitor.store import TRAFFIC, MonitorStore


class WatchedPipeline:
    """A pipeline that records every answer in the store (and otherwise behaves the same)."""

    def __init__(
        self,
        pipeline: Any,
        store: MonitorStore,
        origin: str = TRAFFIC,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self.pipeline, self.store, self.origin, self.clock = pipeline, store, origin, clock
        self._lock = threading.Lock()  # one writer to the store at a time

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pipeline, name)

    def answer(self, query: str, *, trace_id: str | None = None) -> RecordDraft:
        started = self.clock()
        began = time.perf_counter()
        trace: RecordDraft = self.pipeline.answer(query)
        ended = started + int((time.perf_counter() - began) * 1e9)
        shape = pipeline_shape(self.pipeline, self.pipeline.describe())
        ident = trace_id or uuid.uuid4().hex
        registry = getattr(self.pipeline, "registry", None)
        chunks = registry.by_id if registry is not None else {}
        record = TraceRecord.of_sample(
            ident,
            query,
            trace.record(ident),
            chunks,
            started_ns=started,
            ended_ns=ended,
            stages=shape.stages,
            top_k=shape.top_k,
        )
        with self._lock:
            self.store.traces.add([record], origin=self.origin)
        return trace


def watch(
    pipeline: Any,
    store: MonitorStore,
    *,
    origin: str = TRAFFIC,
    clock: Callable[[], int] = time.time_ns,
) -> WatchedPipeline:
    """Wrap ``pipeline`` so that each ``answer(query)`` is stored as a trace (``clock``: when
    a query started, in nanoseconds -- a replay in compressed time passes its own)."""
    return WatchedPipeline(pipeline, store, origin, clock)
