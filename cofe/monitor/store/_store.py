"""The monitoring store: spans, the stage records assembled from them, the chunk corpus
they name, per-stage series per time window, judged samples, canary rounds and alerts.

Embedded default: SQLite (a file; no server; WAL lets the dashboard and queries read
while the collector writes; in the standard library). DuckDB was the other candidate:
faster for column scans, but its single-writer file lock would keep readers out while
the collector runs, and the work here is many small transactional inserts plus
index-range reads of one window -- a row store's job. PostgreSQL runs the same queries
for a shared deployment. Every query is here or in its mixins (``_trace_reads``,
``_windows_queries``, ``_queries``), written once with SQLAlchemy Core.

Every batch of spans is ingested in one transaction: the spans (keyed by trace and
span id, so a batch sent again adds nothing), the chunk texts (content-addressed:
stored once), the re-assembled records of the traces it touched and the windows to
recompute. Counts are always computed from the rows, never incremented, so a batch
delivered twice is never counted twice.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from cofe.monitor.ingest._assemble import TraceRecord, assemble
from cofe.monitor.ingest._spans import Span
from cofe.monitor.ingest._spans import storable as made_storable
from cofe.monitor.store import _codec
from cofe.monitor.store import _tables as t
from cofe.monitor.store._codec import TRAFFIC
from cofe.monitor.store._engine import Engine, StoreError, T, shown_location
from cofe.monitor.store._ingest import IngestReport, bound_traces
from cofe.monitor.store._migrations import (
    STEPS,
    STORE_SCHEMA_VERSION,
    lock_schema,
    set_version,
    stored_version,
    tables_present,
)
from cofe.monitor.store._queries import Queries, slices
from cofe.monitor.store._trace_reads import TraceReads
from cofe.monitor.store._windows_queries import WindowQueries

DEFAULT_WINDOW_SECONDS = 300
DEFAULT_RETAIN_SECONDS = 7 * 24 * 3600
MAX_SECONDS = 100 * 366 * 86400  # nanoseconds of a century still fit a 64-bit integer


def _upsert(table: sa.Table, connection: Connection) -> Any:
    """``INSERT ... ON CONFLICT`` in the connection's dialect (both have it)."""
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


class MonitorStore(TraceReads, WindowQueries, Queries):
    """Open (creating or migrating) the store at ``location``: a file path for SQLite, or a
    ``postgresql://`` URL. ``window_seconds`` and ``retain_seconds`` are fixed when the store
    is created; later opens read them from the store. ``read_only`` opens an existing store
    at the current version without writing anything, ever (the dashboard)."""

    def __init__(
        self,
        location: str | Path,
        *,
        window_seconds: int | None = None,
        retain_seconds: int | None = None,
        read_only: bool = False,
    ) -> None:
        self.location = shown_location(str(location))  # what messages may print
        self._open_computed = {}
        if (
            read_only
            and not str(location).startswith(("postgresql://", "postgres://"))
            and not Path(location).is_file()
        ):
            raise StoreError(
                f"{self.location}: no monitoring store there (the dashboard only "
                "reads one; `cofe monitor collect` or `import` makes it)"
            )
        self.db = Engine(location, read_only=read_only)
        try:
            if read_only:
                self._open_read_only()
            else:
                self._open(window_seconds, retain_seconds)
        except BaseException:
            self.db.close()
            raise

    # --- schema ----------------------------------------------------------------------------

    def _open(self, window_seconds: int | None, retain_seconds: int | None) -> None:
        with self.db.read() as connection:
            present = tables_present(connection)
        if "cofe_meta" not in present:
            window = DEFAULT_WINDOW_SECONDS if window_seconds is None else window_seconds
            retain = DEFAULT_RETAIN_SECONDS if retain_seconds is None else retain_seconds
            _check_settings(window, retain)
            with self.db.write() as connection:  # two processes making one store: one makes it
                lock_schema(connection)
                present = tables_present(connection)  # made by another process meanwhile?
                if "cofe_meta" not in present:
                    if present - {"sqlite_sequence"}:
                        raise StoreError(
                            f"{self.location}: holds other tables; not a cofe "
                            "monitoring store (give an empty database or a new "
                            "file)"
                        )
                    STEPS[0](connection)
                    connection.execute(
                        t.meta.insert(),
                        [
                            {"key": "schema_version", "value": "1"},
                            {"key": "window_seconds", "value": str(window)},
                            {"key": "retain_seconds", "value": str(retain)},
                        ],
                    )
        meta = self._meta()
        version = int(meta.get("schema_version", "0"))
        self._refuse_newer(version)
        while version < STORE_SCHEMA_VERSION:
            with self.db.write() as connection:  # one process migrates; another finds it done
                lock_schema(connection)
                version = stored_version(connection)
                if version >= STORE_SCHEMA_VERSION:
                    break
                if version not in STEPS or version == 0:
                    raise StoreError(f"{self.location}: no migration from store schema {version}")
                STEPS[version](connection)
                version += 1
                set_version(connection, version)
        self.schema_version = version
        self.window_seconds = int(meta["window_seconds"])
        self.retain_seconds = int(meta["retain_seconds"])
        if window_seconds is not None and window_seconds != self.window_seconds:
            raise StoreError(
                f"{self.location}: the store's window is {self.window_seconds} s, "
                f"not {window_seconds} s (it is fixed when the store is created: "
                "leave --window out, or make a new store for another window)"
            )
        if retain_seconds is not None and retain_seconds != self.retain_seconds:
            _check_settings(self.window_seconds, retain_seconds)
            with self.db.write() as connection:
                connection.execute(
                    t.meta.update()
                    .where(t.meta.c.key == "retain_seconds")
                    .values(value=str(retain_seconds))
                )
            self.retain_seconds = retain_seconds

    def _open_read_only(self) -> None:
        """An existing store at this cofe's version, or refused (creating or migrating it
        would be a write)."""
        with self.db.read() as connection:
            if "cofe_meta" not in tables_present(connection):
                raise StoreError(
                    f"{self.location}: not a cofe monitoring store (no cofe_meta table)"
                )
        meta = self._meta()
        version = int(meta.get("schema_version", "0"))
        self._refuse_newer(version)
        if version < STORE_SCHEMA_VERSION:
            raise StoreError(
                f"{self.location}: store schema version {version} is older than "
                f"this cofe's ({STORE_SCHEMA_VERSION}); the dashboard does not "
                "migrate it -- run `cofe monitor status` once to migrate it"
            )
        self.schema_version = version
        self.window_seconds = int(meta["window_seconds"])
        self.retain_seconds = int(meta["retain_seconds"])

    def _refuse_newer(self, version: int) -> None:
        if version > STORE_SCHEMA_VERSION:
            raise StoreError(
                f"{self.location}: store schema version {version} was written by "
                f"a newer cofe (this one reads up to {STORE_SCHEMA_VERSION}); "
                "upgrade cofe"
            )

    def _meta(self) -> dict[str, str]:
        with self.db.read() as connection:
            return {r.key: r.value for r in connection.execute(sa.select(t.meta))}

    @property
    def engine(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.db.dialect

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> MonitorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def window_ns(self) -> int:
        return self.window_seconds * 1_000_000_000

    def window_of(self, t_ns: int) -> int:
        return t_ns - t_ns % self.window_ns

    def _reading(self, work: Callable[[Connection], T]) -> T:
        """``work`` in one read transaction, run again after a lost connection."""

        def run() -> T:
            with self.db.read() as connection:
                return work(connection)

        return self.db.retrying(run)

    def _writing(self, work: Callable[[Connection], T]) -> T:
        """``work`` in one write transaction, run again whole after a lost connection."""

        def run() -> T:
            with self.db.write() as connection:
                return work(connection)

        return self.db.retrying(run)

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
        return self._writing(partial(self._ingest, rows, touched, texts, received, len(spans)))

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
        self._lock_traces(connection, ids)
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
                _upsert(t.spans, connection).on_conflict_do_nothing(
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
        self._put_traces(connection, records, received)
        problems = sum(1 for r in records if r.problems)
        return IngestReport(batch, new, len(groups), problems, refused, full)

    @staticmethod
    def _lock_traces(connection: Connection, trace_ids: Sequence[str]) -> None:
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

    def add_traces(self, records: Iterable[TraceRecord], *, origin: str = TRAFFIC) -> int:
        """Store stage records made without spans (an adapter writing straight to the store)."""
        records = [_codec.storable_record(r) for r in records]
        now = time.time_ns()
        texts = {d.chunk_id: d.text for r in records for d in r.chunks() if d.text is not None}

        def store(connection: Connection) -> None:
            self._add_chunks(connection, texts, now)
            self._put_traces(connection, records, now, origin=origin)

        self._writing(store)
        return len(records)

    @staticmethod
    def _add_chunks(connection: Connection, texts: dict[str, str], now: int) -> None:
        if texts:
            insert = _upsert(t.chunks, connection).on_conflict_do_nothing(
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
        texts = self._chunk_texts(connection, wanted)
        out: dict[str, list[Span]] = {}
        for row, attributes in loaded:
            out.setdefault(row["trace_id"], []).append(_codec.span_of(row, attributes, texts))
        return out

    def _put_traces(
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
            insert = _upsert(t.traces, connection)
            insert = insert.on_conflict_do_update(
                index_elements=["trace_id"],
                set_={
                    c.name: insert.excluded[c.name]
                    for c in t.traces.columns
                    if c.name != "trace_id"
                },
            )
            connection.execute(insert, rows)
        self._mark_dirty(connection, dirty)

    @staticmethod
    def _mark_dirty(connection: Connection, windows: Iterable[tuple[str, int]]) -> None:
        rows = [{"origin": o, "start_ns": s} for o, s in sorted(windows)]
        if rows:
            insert = _upsert(t.dirty_windows, connection).on_conflict_do_nothing(
                index_elements=["origin", "start_ns"]
            )
            connection.execute(insert, rows)

    def mark_dirty(self, windows: Iterable[tuple[str, int]]) -> None:
        """Mark windows to be computed again (their traces or judgements changed)."""
        marks = list(windows)
        self._writing(lambda connection: self._mark_dirty(connection, marks))

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
                self._mark_dirty(
                    connection,
                    {(o, self.window_of(s)) for o, s in old}
                    | {(origin, self.window_of(s)) for _, s in old},
                )

        self._writing(mark)

    # --- windows (``_windows_queries`` refreshes, stores and reads them) -------------------

    def window_rows(self, origin: str, start_ns: int, end_ns: int) -> list[tuple[Any, ...]]:
        """``(stage, signal, value, n, note)`` of every signal of a window: computed by
        ``cofe.monitor.analysis._windows`` (domain logic), not here."""
        from cofe.monitor.analysis._windows import window_rows

        return window_rows(self, origin, start_ns, end_ns)

    # --- retention ---------------------------------------------------------------------------

    def prune(self, now_ns: int | None = None) -> dict[str, int]:
        """Delete spans, traces and judgements older than the retention (series are kept)."""
        if self.retain_seconds == 0:
            return {"spans": 0, "traces": 0}
        cutoff = (now_ns or time.time_ns()) - self.retain_seconds * 1_000_000_000

        def prune(connection: Connection) -> dict[str, int]:
            old = t.traces.c.ended_ns < cutoff
            gone = sa.select(t.traces.c.trace_id).where(old).scalar_subquery()
            traces = int(
                connection.scalar(sa.select(sa.func.count()).where(old).select_from(t.traces)) or 0
            )
            connection.execute(t.judgements.delete().where(t.judgements.c.trace_id.in_(gone)))
            spans = connection.execute(t.spans.delete().where(t.spans.c.end_ns < cutoff)).rowcount
            connection.execute(t.traces.delete().where(old))
            return {"spans": int(spans), "traces": traces}

        return self._writing(prune)

    def size_bytes(self) -> int:
        return self.db.size_bytes()

    def checkpoint(self) -> None:
        """SQLite: the write-ahead log folded into the file (its size is then the store's)."""
        self.db.checkpoint()


def _check_settings(window: int, retain: int) -> None:
    if not 1 <= window <= 366 * 86400:
        raise StoreError(f"the window must be from 1 second to a year, not {window} s")
    if not 0 <= retain <= MAX_SECONDS:
        raise StoreError(
            f"the retention must be 0 (keep forever) or up to a century of seconds, not {retain}"
        )
