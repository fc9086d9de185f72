"""The store's reads of stage records (traces) and of the chunk texts they name. A mixin
of :class:`~cofe.monitor.store.MonitorStore`, like
:class:`~cofe.monitor.store._queries.Queries`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cofe.monitor.ingest._assemble import TraceRecord
from cofe.monitor.store import _codec
from cofe.monitor.store import _tables as t
from cofe.monitor.store._codec import TRAFFIC, _ns
from cofe.monitor.store._engine import T
from cofe.monitor.store._queries import slices


class TraceReads:
    """Stage records and chunk texts, read (see the module)."""

    if TYPE_CHECKING:  # MonitorStore's (``_store``)

        def _reading(self, work: Callable[[Connection], T]) -> T: ...

    @staticmethod
    def _chunk_texts(connection: Connection, chunk_ids: Sequence[str]) -> dict[str, str]:
        if not chunk_ids:
            return {}
        return {
            r.chunk_id: r.text
            for part in slices(chunk_ids)
            for r in connection.execute(
                sa.select(t.chunks.c.chunk_id, t.chunks.c.text).where(t.chunks.c.chunk_id.in_(part))
            )
        }

    def chunk_texts(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        return self._reading(partial(self._chunk_texts, chunk_ids=list(chunk_ids)))

    def _records(
        self, connection: Connection, query: sa.Select[Any], with_text: bool
    ) -> list[TraceRecord]:
        rows = [row._mapping for row in connection.execute(query)]
        texts: dict[str, str] = {}
        if with_text:
            wanted = sorted({c for row in rows for c in _codec.listed_chunk_ids(row)})
            texts = self._chunk_texts(connection, wanted)
        return [_codec.record_of(row, texts) for row in rows]

    def traces(
        self,
        start_ns: int,
        end_ns: int,
        *,
        origin: str | None = TRAFFIC,
        with_text: bool = False,
        limit: int | None = None,
    ) -> list[TraceRecord]:
        """Stage records of the traces that started in ``[start_ns, end_ns)`` (the first
        ``limit`` of them, when given)."""
        c = t.traces.c
        query = sa.select(t.traces).where(c.started_ns >= _ns(start_ns), c.started_ns < _ns(end_ns))
        if origin is not None:
            query = query.where(c.origin == origin)
        query = query.order_by(c.started_ns).limit(limit)
        return self._reading(lambda connection: self._records(connection, query, with_text))

    def trace(self, trace_id: str, *, with_text: bool = True) -> TraceRecord | None:
        found = self.traces_by_id([trace_id], with_text=with_text)
        return found[0] if found else None

    def traces_by_id(
        self, trace_ids: Sequence[str], *, with_text: bool = False
    ) -> list[TraceRecord]:
        return [
            record
            for part in slices(list(trace_ids))
            for record in self._reading(
                partial(
                    self._records,
                    query=sa.select(t.traces).where(t.traces.c.trace_id.in_(part)),
                    with_text=with_text,
                )
            )
        ]

    def traces_by_query(
        self, queries: Sequence[str], since_ns: int
    ) -> dict[str, list[TraceRecord]]:
        """Traces started at or after ``since_ns`` whose query is one of ``queries``."""
        wanted = list(queries)
        if not wanted:
            return {}
        c = t.traces.c
        query = (
            sa.select(t.traces)
            .where(c.query.in_(wanted), c.started_ns >= _ns(since_ns))
            .order_by(c.started_ns)
        )
        out: dict[str, list[TraceRecord]] = {}
        for record in self._reading(lambda connection: self._records(connection, query, True)):
            out.setdefault(record.query or "", []).append(record)
        return out
