"""The store's traces (``store.traces``): spans stored as they arrive and the stage record
each trace assembles to, with the chunk texts they name (content-addressed: a text is
stored once).

Every batch of spans is ingested in one transaction: the spans (keyed by trace and span
id, so a batch sent again adds nothing), the chunk texts, the re-assembled records of the
traces it touched and the windows to recompute. Counts are always computed from the rows,
never incremented, so a batch delivered twice is never counted twice."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cofe.adapters import Span, TraceRecord
from cofe.adapters import assemble_spans as assemble
from cofe.monitor.store import _codec
from cofe.monitor.store import _tables as t
from cofe.monitor.store._clean import storable as made_storable
from cofe.monitor.store._codec import TRAFFIC, _ns
from cofe.monitor.store._engine import Engine, slices, upsert
from cofe.monitor.store._ingest import IngestReport, bound_traces
from cofe.monitor.store._windows import mark_dirty


class Traces:
    """Spans in, stage records and chunk texts out (see the module). ``window_of`` places
    a time in its window, the one a changed trace marks to be computed again."""

    def __init__(self, db: Engine, window_of: Callable[[int], int]) -> None:
        self.db, self.window_of = db, window_of

    # --- writing -----------------------------------------------------------------------------

    def ingest(self, spans: Sequence[Span], *, received_ns: int | None = None) -> IngestReport:
        """Store a batch of spans and re-assemble every trace it touches, in one transaction:
        when this returns, the batch is on disk (it may be acknowledged to the sender)."""
        received = received_ns or time.time_ns()
        storable = [made_storable(s) for s in spans]  # one bad value never costs the batch
        texts: dict[str, str] = {}
        rows = [_codec.span_row(s, texts, received) for s in storable]
        touched: dict[str, list[Span]] = {}
        for s in storable:
            touched.setdefault(s.trace_id, []).append(s)
        return self.db.writing(partial(self._ingest, rows, touched, texts, received, len(spans)))

    def _ingest(
        self,
        rows: list[dict[str, Any]],
        touched: dict[str, list[Span]],
        texts: dict[str, str],
        received: int,
        batch: int,
        connection: Connection,
    ) -> IngestReport:
        groups = {trace_id: list(group) for trace_id, group in touched.items()}
        ids = list(groups)
        self._lock(connection, ids)
        # the keys of spans already stored, read before the batch's are written (no RETURNING:
        # a plain executemany); a batch sent again costs neither memory nor writes
        known: dict[str, set[str]] = {}
        for part in slices(ids):
            for trace_id, span_id in connection.execute(
                sa.select(t.spans.c.trace_id, t.spans.c.span_id).where(t.spans.c.trace_id.in_(part))
            ):
                known.setdefault(trace_id, set()).add(span_id)
        refused, full = bound_traces(groups, known)
        if refused:
            allowed = {(s.trace_id, s.span_id) for group in groups.values() for s in group}
            rows = [r for r in rows if (r["trace_id"], r["span_id"]) in allowed]
        fresh = [r for r in rows if r["span_id"] not in known.get(r["trace_id"], ())]
        new = len({(r["trace_id"], r["span_id"]) for r in fresh})
        if fresh:  # spans stored before (a batch sent again) add nothing
            connection.execute(
                upsert(t.spans, connection).on_conflict_do_nothing(
                    index_elements=["trace_id", "span_id"]
                ),
                fresh,
            )
        # re-assembled only if the batch brought it a span (a span stored before is kept)
        changed = {
            trace_id
            for trace_id in ids
            if any(s.span_id not in known.get(trace_id, ()) for s in groups[trace_id])
        }
        self._add_chunks(connection, texts if changed else {}, received)
        stored = self._stored_spans(connection, [i for i in ids if i in changed and i in known])
        for trace_id, before in stored.items():
            groups[trace_id] = groups[trace_id] + before
        records = [
            assemble(trace_id, list({s.span_id: s for s in groups[trace_id]}.values()))
            for trace_id in ids
            if trace_id in changed
        ]
        self._put(connection, records, received)
        problems = sum(1 for r in records if r.problems)
        return IngestReport(batch, new, len(groups), problems, refused, full)

    @staticmethod
    def _lock(connection: Connection, trace_ids: Sequence[str]) -> None:
        """PostgreSQL: one writer per trace until commit, so two collectors storing spans of
        one trace at once each assemble it from the other's committed spans (SQLite's write
        transactions already run one at a time). Locks are taken in order: no deadlock."""
        if connection.dialect.name == "postgresql" and trace_ids:
            connection.execute(
                sa.text(
                    "SELECT pg_advisory_xact_lock(hashtext(t)) FROM "
                    "(SELECT unnest(CAST(:ids AS text[])) AS t ORDER BY 1) AS ordered"
                ),
                {"ids": sorted(trace_ids)},
            )

    def add(self, records: Iterable[TraceRecord], *, origin: str = TRAFFIC) -> int:
        """Store stage records made without spans (an adapter writing straight to the store)."""
        records = [_codec.storable_record(r) for r in records]
        now = time.time_ns()
        texts = {d.chunk_id: d.text for r in records for d in r.chunks() if d.text is not None}

        def store(connection: Connection) -> None:
            self._add_chunks(connection, texts, now)
            self._put(connection, records, now, origin=origin)

        self.db.writing(store)
        return len(records)

    @staticmethod
    def _add_chunks(connection: Connection, texts: dict[str, str], now: int) -> None:
        if texts:
            insert = upsert(t.chunks, connection).on_conflict_do_nothing(
                index_elements=["chunk_id"]
            )
            connection.execute(
                insert,
                [
                    {"chunk_id": chunk_id, "text": text, "first_seen_ns": now}
                    for chunk_id, text in sorted(texts.items())
                ],
            )  # sorted: batches sharing chunks wait, never deadlock

    def _stored_spans(
        self, connection: Connection, trace_ids: Sequence[str]
    ) -> dict[str, list[Span]]:
        if not trace_ids:
            return {}
        rows = [
            row
            for part in slices(trace_ids)
            for row in connection.execute(sa.select(t.spans).where(t.spans.c.trace_id.in_(part)))
        ]
        loaded = [(row._mapping, json.loads(row.attributes)) for row in rows]
        wanted = sorted({c for _, attributes in loaded for c in _codec.chunk_ids_of(attributes)})
        texts = _chunk_texts(connection, wanted)
        out: dict[str, list[Span]] = {}
        for row, attributes in loaded:
            out.setdefault(row["trace_id"], []).append(_codec.span_of(row, attributes, texts))
        return out

    def _put(
        self,
        connection: Connection,
        records: Sequence[TraceRecord],
        now: int,
        origin: str | None = None,
    ) -> None:
        ids = [r.trace_id for r in records]
        c = t.traces.c
        existing = {
            r.trace_id: (r.origin, r.started_ns)
            for part in slices(ids)
            for r in connection.execute(
                sa.select(c.trace_id, c.origin, c.started_ns).where(c.trace_id.in_(part))
            )
        }
        rows, dirty = [], set()
        for r in records:
            before = existing.get(r.trace_id)
            kept = origin or (before[0] if before else TRAFFIC)  # a canary trace stays a canary
            if before is not None:  # the root came later and moved the start: both windows
                dirty.add((before[0], self.window_of(before[1])))
            rows.append(_codec.trace_row(r, kept, now))
            dirty.add((kept, self.window_of(r.started_ns)))
        if rows:
            insert = upsert(t.traces, connection)
            insert = insert.on_conflict_do_update(
                index_elements=["trace_id"],
                set_={
                    c.name: insert.excluded[c.name]
                    for c in t.traces.columns
                    if c.name != "trace_id"
                },
            )
            connection.execute(insert, rows)
        mark_dirty(connection, dirty)

    def set_origin(self, trace_ids: Sequence[str], origin: str) -> None:
        """Mark traces (e.g. canary queries matched among traffic) and refresh their windows."""
        ids = list(trace_ids)

        def mark(connection: Connection) -> None:
            for part in slices(ids):
                old = connection.execute(
                    sa.select(t.traces.c.origin, t.traces.c.started_ns).where(
                        t.traces.c.trace_id.in_(part)
                    )
                ).all()
                connection.execute(
                    t.traces.update().where(t.traces.c.trace_id.in_(part)).values(origin=origin)
                )
                mark_dirty(
                    connection,
                    {(o, self.window_of(s)) for o, s in old}
                    | {(origin, self.window_of(s)) for _, s in old},
                )

        self.db.writing(mark)

    # --- reading -----------------------------------------------------------------------------

    def chunk_texts(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        return self.db.reading(partial(_chunk_texts, chunk_ids=list(chunk_ids)))

    @staticmethod
    def _records(
        connection: Connection, query: sa.Select[Any], with_text: bool
    ) -> list[TraceRecord]:
        rows = [row._mapping for row in connection.execute(query)]
        texts: dict[str, str] = {}
        if with_text:
            wanted = sorted({c for row in rows for c in _codec.listed_chunk_ids(row)})
            texts = _chunk_texts(connection, wanted)
        return [_codec.record_of(row, texts) for row in rows]

    def started_in(
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
        return self.db.reading(lambda connection: self._records(connection, query, with_text))

    def get(self, trace_id: str, *, with_text: bool = True) -> TraceRecord | None:
        found = self.by_id([trace_id], with_text=with_text)
        return found[0] if found else None

    def by_id(self, trace_ids: Sequence[str], *, with_text: bool = False) -> list[TraceRecord]:
        return [
            record
            for part in slices(list(trace_ids))
            for record in self.db.reading(
                partial(
                    self._records,
                    query=sa.select(t.traces).where(t.traces.c.trace_id.in_(part)),
                    with_text=with_text,
                )
            )
        ]

    def by_query(self, queries: Sequence[str], since_ns: int) -> dict[str, list[TraceRecord]]:
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
        for record in self.db.reading(lambda connection: self._records(connection, query, True)):
            out.setdefault(record.query or "", []).append(record)
        return out

    def problem_counts(
        self, *, origin: str | None = None, since_ns: int | None = None, until_ns: int | None = None
    ) -> dict[str, int]:
        """Traces per problem (numbers in a reason folded to N), and spans of unknown kinds."""
        c = t.traces.c
        query = sa.select(c.problems, c.ignored).where((c.problems != "[]") | (c.ignored != "{}"))
        if origin is not None:
            query = query.where(c.origin == origin)
        if since_ns is not None:
            query = query.where(c.started_ns >= since_ns)
        if until_ns is not None:
            query = query.where(c.started_ns < until_ns)
        out: dict[str, int] = {}
        for problems, ignored in self.db.reading(
            lambda connection: connection.execute(query).all()
        ):
            for reason in json.loads(problems):
                key = re.sub(r"\d+", "N", reason)
                out[key] = out.get(key, 0) + 1
            for kind, n in json.loads(ignored).items():
                key = f"spans of unknown kind {kind}"
                out[key] = out.get(key, 0) + int(n)
        return out


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
