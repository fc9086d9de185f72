"""The monitoring store: spans, the stage records assembled from them, the chunk corpus
they name, per-stage series per time window, judged samples and canary rounds.

Embedded default: SQLite (a file; no server; WAL lets the dashboard and queries read
while the collector writes; in the standard library). DuckDB was the other candidate:
faster for column scans, but its single-writer file lock would keep readers out while
the collector runs, and the work here is many small transactional inserts plus
index-range reads of one window -- a row store's job. PostgreSQL runs the same queries
for a shared deployment.

Every batch of spans is ingested in one transaction: the spans (keyed by trace and
span id, so a batch sent again adds nothing), the chunk texts (content-addressed:
stored once), the re-assembled records of the traces it touched and the windows to
recompute. Counts are always computed from the rows, never incremented, so a batch
delivered twice is never counted twice.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cofe.monitor._assemble import Doc, TraceRecord, assemble
from cofe.monitor._judged import judged_signals
from cofe.monitor._signals import compute_signals
from cofe.monitor._spans import Span
from cofe.monitor._sql import (
    Database,
    StoreError,
    connect,
    in_slices,
    placeholders,
    shown_location,
)
from cofe.runlog import Stage

STORE_SCHEMA_VERSION = 3
DEFAULT_WINDOW_SECONDS = 300
DEFAULT_RETAIN_SECONDS = 7 * 24 * 3600
TRAFFIC, CANARY = "traffic", "canary"
DROPPED = "cofe.dropped_attributes"  # a stored span's count of attributes its tracer dropped

_SCHEMA = [
    "CREATE TABLE cofe_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE spans (
        trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent_id TEXT, name TEXT NOT NULL,
        kind TEXT, start_ns BIGINT NOT NULL, end_ns BIGINT NOT NULL, status TEXT NOT NULL,
        status_message TEXT NOT NULL, attributes TEXT NOT NULL, events TEXT NOT NULL,
        received_ns BIGINT NOT NULL, PRIMARY KEY (trace_id, span_id))""",
    "CREATE INDEX spans_start ON spans (start_ns)",
    """CREATE TABLE chunks (chunk_id TEXT PRIMARY KEY, text TEXT NOT NULL,
        first_seen_ns BIGINT NOT NULL)""",
    """CREATE TABLE traces (
        trace_id TEXT PRIMARY KEY, origin TEXT NOT NULL, started_ns BIGINT NOT NULL,
        ended_ns BIGINT NOT NULL, query TEXT, answer TEXT, pool TEXT, context TEXT,
        latency TEXT NOT NULL, stages TEXT NOT NULL, error_stage TEXT, error TEXT,
        problems TEXT NOT NULL, ignored TEXT NOT NULL, spans INTEGER NOT NULL,
        is_query INTEGER NOT NULL, updated_ns BIGINT NOT NULL)""",
    "CREATE INDEX traces_window ON traces (origin, started_ns)",
    "CREATE INDEX traces_query ON traces (query, started_ns)",
    """CREATE TABLE dirty_windows (origin TEXT NOT NULL, start_ns BIGINT NOT NULL,
        PRIMARY KEY (origin, start_ns))""",
    """CREATE TABLE series (
        origin TEXT NOT NULL, window_ns BIGINT NOT NULL, start_ns BIGINT NOT NULL,
        stage TEXT NOT NULL, signal TEXT NOT NULL, value DOUBLE PRECISION, n INTEGER NOT NULL,
        note TEXT, PRIMARY KEY (origin, window_ns, start_ns, stage, signal))""",
    """CREATE TABLE judgements (
        trace_id TEXT NOT NULL, measure TEXT NOT NULL, value DOUBLE PRECISION, reason TEXT,
        model TEXT NOT NULL, judged_ns BIGINT NOT NULL, PRIMARY KEY (trace_id, measure))""",
    """CREATE TABLE canary_rounds (
        round_id TEXT PRIMARY KEY, started_ns BIGINT NOT NULL, finished_ns BIGINT NOT NULL,
        evalset_sha256 TEXT, pipeline TEXT NOT NULL, samples INTEGER NOT NULL,
        answered INTEGER NOT NULL, run_dir TEXT, summary TEXT NOT NULL)""",
    """CREATE TABLE canary_measures (
        round_id TEXT NOT NULL, stage TEXT NOT NULL, step TEXT NOT NULL, measure TEXT NOT NULL,
        value DOUBLE PRECISION, n INTEGER NOT NULL, unscored INTEGER NOT NULL,
        PRIMARY KEY (round_id, step, measure))""",
    """CREATE TABLE canary_cases (
        round_id TEXT NOT NULL, sample_id TEXT NOT NULL, trace_id TEXT, query TEXT NOT NULL,
        verdict TEXT NOT NULL, stage TEXT, evidence TEXT NOT NULL,
        PRIMARY KEY (round_id, sample_id))""",
]

MIGRATIONS: dict[int, list[str]] = {
    # 2: alerts fired by ``cofe monitor alerts`` (rule, stage, measure, change with its CI,
    # example cases as JSON, where each sink delivered it)
    1: [
        """CREATE TABLE alerts (
            alert_id TEXT PRIMARY KEY, rule TEXT NOT NULL, fired_ns BIGINT NOT NULL,
            origin TEXT NOT NULL, stage TEXT NOT NULL, measure TEXT NOT NULL,
            severity TEXT NOT NULL, window_start_ns BIGINT NOT NULL,
            window_end_ns BIGINT NOT NULL, baseline DOUBLE PRECISION, current DOUBLE PRECISION,
            ci_low DOUBLE PRECISION, ci_high DOUBLE PRECISION, p_value DOUBLE PRECISION,
            message TEXT NOT NULL, examples TEXT NOT NULL, delivered TEXT NOT NULL)""",
        "CREATE INDEX alerts_fired ON alerts (rule, fired_ns)",
    ],
    # 3: every canary sample's measure values, so alerts test a measure's change per sample
    2: [
        """CREATE TABLE canary_scores (
            round_id TEXT NOT NULL, sample_id TEXT NOT NULL, step TEXT NOT NULL,
            measure TEXT NOT NULL, value DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (round_id, step, measure, sample_id))""",
    ],
}
"""``{version: statements}`` taking a store from ``version`` to ``version + 1``; a new store
is made at version 1 and migrated, so every store went through the same statements."""


@dataclass(frozen=True)
class IngestReport:
    spans: int  # spans in the batch
    new_spans: int  # of them, not stored before
    traces: int  # traces (re)assembled
    problems: int  # of them, traces missing a part


def _doc_rows(docs: Sequence[Doc] | None) -> str | None:
    if docs is None:
        return None
    return json.dumps([[d.chunk_id, d.score, d.ref, d.chars] for d in docs])


def _strip_contents(attributes: dict[str, Any], texts: dict[str, str]) -> dict[str, Any]:
    """Document contents leave the span's attributes for the chunk table (stored once);
    the span keeps the chunk id under ``...document.content_chunk``."""
    from cofe.adapters._trace import text_id

    out = {}
    for key, value in attributes.items():
        if key.endswith(".document.content") and isinstance(value, str):
            chunk_id = text_id(value)
            texts[chunk_id] = value
            out[key + "_chunk"] = chunk_id
        else:
            out[key] = value
    return out


def _restore_contents(attributes: dict[str, Any], texts: dict[str, str]) -> dict[str, Any]:
    out = {}
    for key, value in attributes.items():
        if key.endswith(".document.content_chunk"):
            text = texts.get(value)
            if text is not None:
                out[key.removesuffix("_chunk")] = text
        else:
            out[key] = value
    return out


class MonitorStore:
    """Open (creating or migrating) the store at ``location``: a file path for SQLite, or a
    ``postgresql://`` URL. ``window_seconds`` and ``retain_seconds`` are fixed when the store
    is created; later opens read them from the store."""

    def __init__(
        self,
        location: str | Path,
        *,
        window_seconds: int | None = None,
        retain_seconds: int | None = None,
    ) -> None:
        self.location = shown_location(str(location))  # what messages may print
        self.db: Database = connect(location)
        try:
            self._open(window_seconds, retain_seconds)
        except BaseException:
            self.db.close()
            raise

    # --- schema ----------------------------------------------------------------------------

    def _tables(self) -> set[str]:
        if self.db.engine == "sqlite":
            rows = self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        else:
            rows = self.db.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema()"
            )
        return {r[0] for r in rows}

    def _open(self, window_seconds: int | None, retain_seconds: int | None) -> None:
        if "cofe_meta" not in self._tables():
            window = DEFAULT_WINDOW_SECONDS if window_seconds is None else window_seconds
            retain = DEFAULT_RETAIN_SECONDS if retain_seconds is None else retain_seconds
            _check_settings(window, retain)
            with self.db.transaction():  # two processes making one store: one makes it
                if self.db.engine == "postgresql":
                    self.db.execute("SELECT pg_advisory_xact_lock(hashtext('cofe store'))")
                tables = self._tables()  # made by another process meanwhile?
                if "cofe_meta" not in tables:
                    if tables - {"sqlite_sequence"}:
                        raise StoreError(f"{self.location}: holds other tables; not a cofe "
                                         "monitoring store (give an empty database or a new "
                                         "file)")  # fmt: skip
                    for statement in _SCHEMA:
                        self.db.execute(statement)
                    self.db.executemany(
                        "INSERT INTO cofe_meta (key, value) VALUES (?, ?)",
                        [("schema_version", "1"),
                         ("window_seconds", str(window)), ("retain_seconds", str(retain))],
                    )  # fmt: skip
        meta = dict(self.db.execute("SELECT key, value FROM cofe_meta"))
        version = int(meta.get("schema_version", "0"))
        if version > STORE_SCHEMA_VERSION:
            raise StoreError(f"{self.location}: store schema version {version} was written by "
                             f"a newer cofe (this one reads up to {STORE_SCHEMA_VERSION}); "
                             "upgrade cofe")  # fmt: skip
        while version < STORE_SCHEMA_VERSION:
            with self.db.transaction():  # one process migrates; another finds it done
                if self.db.engine == "postgresql":
                    self.db.execute("SELECT pg_advisory_xact_lock(hashtext('cofe store'))")
                version = int(self.db.execute(
                    "SELECT value FROM cofe_meta WHERE key = 'schema_version'")[0][0])  # fmt: skip
                if version >= STORE_SCHEMA_VERSION:
                    break
                if version not in MIGRATIONS:
                    raise StoreError(f"{self.location}: no migration from store schema {version}")
                for statement in MIGRATIONS[version]:
                    self.db.execute(statement)
                version += 1
                self.db.execute("UPDATE cofe_meta SET value = ? WHERE key = 'schema_version'",
                                [str(version)])  # fmt: skip
        self.schema_version = version
        self.window_seconds = int(meta["window_seconds"])
        self.retain_seconds = int(meta["retain_seconds"])
        if window_seconds is not None and window_seconds != self.window_seconds:
            raise StoreError(f"{self.location}: the store's window is {self.window_seconds} s, "
                             f"not {window_seconds} s (it is fixed when the store is created: "
                             "leave --window out, or make a new store for another window)")  # fmt: skip
        if retain_seconds is not None and retain_seconds != self.retain_seconds:
            _check_settings(self.window_seconds, retain_seconds)
            self.db.execute("UPDATE cofe_meta SET value = ? WHERE key = 'retain_seconds'",
                            [str(retain_seconds)])  # fmt: skip
            self.retain_seconds = retain_seconds

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

    # --- writing -----------------------------------------------------------------------------

    def ingest(self, spans: Sequence[Span], *, received_ns: int | None = None) -> IngestReport:
        """Store a batch of spans and re-assemble every trace it touches, in one transaction:
        when this returns, the batch is on disk (it may be acknowledged to the sender)."""
        received = received_ns or time.time_ns()
        texts: dict[str, str] = {}
        rows = []
        touched: dict[str, list[Span]] = {}
        for s in spans:
            attrs = _strip_contents(s.attributes, texts)
            if s.dropped_attributes:  # kept, so a trace rebuilt later still says it was cut
                attrs[DROPPED] = s.dropped_attributes
            rows.append((s.trace_id, s.span_id, s.parent_id, s.name, s.kind, s.start_ns, s.end_ns,
                         s.status, s.status_message, json.dumps(attrs), json.dumps(list(s.events)),
                         received))  # fmt: skip
            touched.setdefault(s.trace_id, []).append(s)
        with self.db.transaction():
            ids = list(touched)
            self._lock_traces(ids)
            # traces with spans from earlier batches are assembled from all their stored spans
            earlier = self._with_spans(ids)
            new = self.db.executemany(  # spans stored before (a batch sent again) add nothing
                "INSERT INTO spans (trace_id, span_id, parent_id, name, kind, start_ns, end_ns, "
                "status, status_message, attributes, events, received_ns) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (trace_id, span_id) DO NOTHING",
                rows,
            )
            self._add_chunks(texts, received)
            for trace_id, stored in self._stored_spans(earlier).items():
                touched[trace_id] = stored
            records = [assemble(trace_id, list({s.span_id: s for s in group}.values()))
                       for trace_id, group in touched.items()]  # fmt: skip
            self._put_traces(records, received)
        return IngestReport(len(spans), new, len(records), sum(1 for r in records if r.problems))

    def _lock_traces(self, trace_ids: Sequence[str]) -> None:
        """PostgreSQL: one writer per trace until commit, so two collectors storing spans of
        one trace at once each assemble it from the other's committed spans (SQLite's write
        transactions already run one at a time). Locks are taken in order: no deadlock."""
        if self.db.engine == "postgresql" and trace_ids:
            self.db.execute("SELECT pg_advisory_xact_lock(hashtext(t)) FROM "
                            "(SELECT unnest(?::text[]) AS t ORDER BY 1) AS ordered",
                            [sorted(trace_ids)])  # fmt: skip

    def add_traces(self, records: Iterable[TraceRecord], *, origin: str = TRAFFIC) -> int:
        """Store stage records made without spans (an adapter writing straight to the store)."""
        records = list(records)
        now = time.time_ns()
        texts = {d.chunk_id: d.text for r in records for d in r.chunks() if d.text is not None}
        with self.db.transaction():
            self._add_chunks(texts, now)
            self._put_traces(records, now, origin=origin)
        return len(records)

    def _add_chunks(self, texts: dict[str, str], now: int) -> None:
        if texts:
            self.db.executemany(
                "INSERT INTO chunks (chunk_id, text, first_seen_ns) VALUES (?, ?, ?) "
                "ON CONFLICT (chunk_id) DO NOTHING",
                [(chunk_id, text, now) for chunk_id, text in texts.items()],
            )

    def _with_spans(self, trace_ids: Sequence[str]) -> list[str]:
        """Those of the traces that have spans stored already."""
        out: list[str] = []
        for part in in_slices(trace_ids):
            out += [r[0] for r in self.db.execute(
                f"SELECT DISTINCT trace_id FROM spans WHERE trace_id IN ({placeholders(len(part))})",
                part)]  # fmt: skip
        return out

    def _stored_spans(self, trace_ids: Sequence[str]) -> dict[str, list[Span]]:
        out: dict[str, list[Span]] = {}
        rows = []
        for part in in_slices(trace_ids):
            rows += self.db.execute(
                "SELECT trace_id, span_id, parent_id, name, start_ns, end_ns, status, "
                f"status_message, attributes, events FROM spans WHERE trace_id IN "
                f"({placeholders(len(part))})", part)  # fmt: skip
        loaded = [(row, json.loads(row[8])) for row in rows]
        wanted = sorted({v for _, attrs in loaded for k, v in attrs.items()
                         if k.endswith(".document.content_chunk")})  # fmt: skip
        texts = self.chunk_texts(wanted)
        for row, attrs in loaded:
            dropped = int(attrs.pop(DROPPED, 0))
            out.setdefault(row[0], []).append(Span(
                trace_id=row[0], span_id=row[1], parent_id=row[2], name=row[3], start_ns=row[4],
                end_ns=row[5], status=row[6], status_message=row[7],
                attributes=_restore_contents(attrs, texts), events=tuple(json.loads(row[9])),
                dropped_attributes=dropped))  # fmt: skip
        return out

    def chunk_texts(self, chunk_ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        ids = list(chunk_ids)
        for part in in_slices(ids):
            out.update(self.db.execute(
                f"SELECT chunk_id, text FROM chunks WHERE chunk_id IN ({placeholders(len(part))})",
                part))  # fmt: skip
        return out

    def _put_traces(self, records: Sequence[TraceRecord], now: int, origin: str | None = None) -> None:
        existing: dict[str, tuple[str, int]] = {}
        ids = [r.trace_id for r in records]
        for part in in_slices(ids):
            existing.update((t, (o, start)) for t, o, start in self.db.execute(
                "SELECT trace_id, origin, started_ns FROM traces WHERE trace_id IN "
                f"({placeholders(len(part))})", part))  # fmt: skip
        rows, dirty = [], set()
        for r in records:
            before = existing.get(r.trace_id)
            kept = origin or (before[0] if before else TRAFFIC)  # a canary trace stays a canary
            if before is not None:  # the root came later and moved the start: both windows
                dirty.add((before[0], self.window_of(before[1])))
            rows.append((r.trace_id, kept, r.started_ns, r.ended_ns, r.query, r.answer,
                         _doc_rows(r.pool), _doc_rows(r.context),
                         json.dumps({s.value: v for s, v in r.latency.items()}),
                         json.dumps([s.value for s in r.stages]),
                         r.error_stage.value if r.error_stage else None, r.error,
                         json.dumps(r.problems), json.dumps(r.ignored), r.spans, int(r.is_query),
                         now))  # fmt: skip
            dirty.add((kept, self.window_of(r.started_ns)))
        self.db.executemany(
            "INSERT INTO traces (trace_id, origin, started_ns, ended_ns, query, answer, pool, "
            "context, latency, stages, error_stage, error, problems, ignored, spans, is_query, "
            "updated_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (trace_id) DO UPDATE "
            "SET origin = excluded.origin, started_ns = excluded.started_ns, "
            "ended_ns = excluded.ended_ns, query = excluded.query, answer = excluded.answer, "
            "pool = excluded.pool, context = excluded.context, latency = excluded.latency, "
            "stages = excluded.stages, error_stage = excluded.error_stage, error = excluded.error, "
            "problems = excluded.problems, ignored = excluded.ignored, spans = excluded.spans, "
            "is_query = excluded.is_query, updated_ns = excluded.updated_ns",
            rows,
        )
        self.mark_dirty(dirty)

    def mark_dirty(self, windows: Iterable[tuple[str, int]]) -> None:
        self.db.executemany(
            "INSERT INTO dirty_windows (origin, start_ns) VALUES (?, ?) "
            "ON CONFLICT (origin, start_ns) DO NOTHING",
            sorted(windows),
        )

    def set_origin(self, trace_ids: Sequence[str], origin: str) -> None:
        """Mark traces (e.g. canary queries matched among traffic) and refresh their windows."""
        with self.db.transaction():
            for part in in_slices(list(trace_ids)):
                marks = placeholders(len(part))
                old = self.db.execute(f"SELECT origin, started_ns FROM traces "
                                      f"WHERE trace_id IN ({marks})", part)  # fmt: skip
                self.db.execute(f"UPDATE traces SET origin = ? WHERE trace_id IN ({marks})",
                                [origin, *part])  # fmt: skip
                self.mark_dirty({(o, self.window_of(t)) for o, t in old}
                                | {(origin, self.window_of(t)) for _, t in old})

    # --- reading -----------------------------------------------------------------------------

    _TRACE_COLUMNS = ("trace_id, origin, started_ns, ended_ns, query, answer, pool, context, "
                      "latency, stages, error_stage, error, problems, ignored, spans, is_query")  # fmt: skip

    def _records(self, rows: Sequence[tuple], with_text: bool) -> list[TraceRecord]:
        texts: dict[str, str] = {}
        if with_text:
            wanted = sorted({d[0] for row in rows for col in (row[6], row[7]) if col
                             for d in json.loads(col)})  # fmt: skip
            texts = self.chunk_texts(wanted)

        def docs(column: str | None) -> list[Doc] | None:
            if column is None:
                return None
            # [chunk id, score, ref, chars]; rows stored before chars was kept have three
            return [Doc(d[0], d[1], d[2], texts.get(d[0]), d[3] if len(d) > 3 else None)
                    for d in json.loads(column)]  # fmt: skip

        out = []
        for row in rows:
            out.append(TraceRecord(
                trace_id=row[0], started_ns=row[2], ended_ns=row[3], query=row[4], answer=row[5],
                pool=docs(row[6]), context=docs(row[7]),
                latency={Stage(k): v for k, v in json.loads(row[8]).items()},
                stages=tuple(Stage(s) for s in json.loads(row[9])),
                error_stage=Stage(row[10]) if row[10] else None, error=row[11],
                problems=json.loads(row[12]), ignored=json.loads(row[13]), spans=row[14],
                is_query=bool(row[15])))  # fmt: skip
        return out

    def traces(self, start_ns: int, end_ns: int, *, origin: str | None = TRAFFIC,
               with_text: bool = False, limit: int | None = None) -> list[TraceRecord]:  # fmt: skip
        """Stage records of the traces that started in ``[start_ns, end_ns)`` (the first
        ``limit`` of them, when given)."""
        sql, params = _filtered(
            f"SELECT {self._TRACE_COLUMNS} FROM traces WHERE started_ns >= ? AND started_ns < ?",
            [start_ns, end_ns], origin=origin)
        sql += " ORDER BY started_ns"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return self._records(self.db.execute(sql, params), with_text)

    def trace(self, trace_id: str, *, with_text: bool = True) -> TraceRecord | None:
        rows = self.db.execute(f"SELECT {self._TRACE_COLUMNS} FROM traces WHERE trace_id = ?",
                               [trace_id])  # fmt: skip
        return self._records(rows, with_text)[0] if rows else None

    def traces_by_id(self, trace_ids: Sequence[str], *, with_text: bool = False) -> list[TraceRecord]:
        rows: list[tuple] = []
        for part in in_slices(list(trace_ids)):
            rows += self.db.execute(f"SELECT {self._TRACE_COLUMNS} FROM traces WHERE trace_id IN "
                                    f"({placeholders(len(part))})", part)  # fmt: skip
        return self._records(rows, with_text)

    def traces_by_query(self, queries: Sequence[str], since_ns: int) -> dict[str, list[TraceRecord]]:
        """Traces started at or after ``since_ns`` whose query is one of ``queries``."""
        out: dict[str, list[TraceRecord]] = {}
        for part in in_slices(list(queries)):
            rows = self.db.execute(
                f"SELECT {self._TRACE_COLUMNS} FROM traces WHERE query IN "
                f"({placeholders(len(part))}) AND started_ns >= ? ORDER BY started_ns",
                [*part, since_ns])  # fmt: skip
            for record in self._records(rows, with_text=True):
                out.setdefault(record.query or "", []).append(record)
        return out

    def counts(self) -> dict[str, int]:
        """Rows per table, and traces with problems."""
        out = {}
        for table in ("spans", "traces", "chunks", "series", "judgements", "canary_rounds"):
            out[table] = int(self.db.execute(f"SELECT COUNT(*) FROM {table}")[0][0])
        out["traces_with_problems"] = int(self.db.execute(
            "SELECT COUNT(*) FROM traces WHERE problems <> '[]'")[0][0])  # fmt: skip
        return out

    def problem_counts(self, *, origin: str | None = None, since_ns: int | None = None,
                       until_ns: int | None = None) -> dict[str, int]:  # fmt: skip
        """Traces per problem (numbers in a reason folded to N), and spans of unknown kinds."""
        import re

        sql, params = _filtered(
            "SELECT problems, ignored FROM traces WHERE (problems <> '[]' OR ignored <> '{}')",
            [], origin=origin, **{"started_ns >=": since_ns, "started_ns <": until_ns})
        out: dict[str, int] = {}
        for problems, ignored in self.db.execute(sql, params):
            for reason in json.loads(problems):
                key = re.sub(r"\d+", "N", reason)
                out[key] = out.get(key, 0) + 1
            for kind, n in json.loads(ignored).items():
                key = f"spans of unknown kind {kind}"
                out[key] = out.get(key, 0) + int(n)
        return out

    def canary_series(self, *, since_ns: int = 0, stage: str | None = None,
                      measure: str | None = None) -> list[dict[str, Any]]:  # fmt: skip
        """Canary measures per round, oldest first."""
        sql, params = _filtered(
            "SELECT r.started_ns, m.round_id, m.stage, m.step, m.measure, m.value, m.n, "
            "m.unscored FROM canary_measures m JOIN canary_rounds r ON r.round_id = m.round_id "
            "WHERE r.started_ns >= ?", [since_ns], **{"m.stage": stage, "m.measure": measure})
        rows = self.db.execute(sql + " ORDER BY r.started_ns, m.step, m.measure", params)
        keys = ("start_ns", "round_id", "stage", "step", "measure", "value", "n", "unscored")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    # --- windows -----------------------------------------------------------------------------

    def refresh(self) -> int:
        """Recompute the series of every window that received traces (or judgements) since
        it was last computed; returns how many windows were computed."""
        dirty = self.db.execute("SELECT origin, start_ns FROM dirty_windows ORDER BY start_ns")
        for origin, start in dirty:
            # one transaction: a batch stored meanwhile either is in the window's rows or
            # marks the window again (never computed without it and unmarked)
            with self.db.transaction():
                # the mark is taken first: a batch committing meanwhile waits for this
                # transaction and marks the window again (PostgreSQL's row lock; SQLite has
                # one writer), and a second refresher finds it gone and skips the window
                taken = self.db.execute("DELETE FROM dirty_windows WHERE origin = ? AND "
                                        "start_ns = ? RETURNING start_ns", [origin, start])  # fmt: skip
                if not taken:
                    continue
                rows = self.window_rows(origin, start, start + self.window_ns)
                self.db.execute("DELETE FROM series WHERE origin = ? AND window_ns = ? AND "
                                "start_ns = ?", [origin, self.window_ns, start])  # fmt: skip
                self.db.executemany(
                    "INSERT INTO series (origin, window_ns, start_ns, stage, signal, value, n, "
                    "note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(origin, self.window_ns, start, *row) for row in rows],
                )
        return len(dirty)

    def window_rows(self, origin: str, start_ns: int, end_ns: int) -> list[tuple]:
        """``(stage, signal, value, n, note)`` of every label-free and judged signal."""
        traces = self.traces(start_ns, end_ns, origin=origin)
        rows = [(stage, name, v.value, v.n, v.note) for stage, name, v in compute_signals(traces)]
        rows += judged_signals(self, [t.trace_id for t in traces])
        return rows

    def series(self, *, origin: str = TRAFFIC, since_ns: int = 0, until_ns: int | None = None,
               stage: str | None = None, signal: str | None = None) -> list[dict[str, Any]]:  # fmt: skip
        """Stored series rows, oldest first (``refresh`` first to include recent traces)."""
        sql, params = _filtered(
            "SELECT start_ns, stage, signal, value, n, note FROM series WHERE origin = ? "
            "AND window_ns = ? AND start_ns >= ?", [origin, self.window_ns, since_ns],
            **{"start_ns <": until_ns, "stage": stage, "signal": signal})
        rows = self.db.execute(sql + " ORDER BY start_ns, stage, signal", params)
        return [dict(zip(("start_ns", "stage", "signal", "value", "n", "note"), r, strict=True))
                for r in rows]  # fmt: skip

    # --- retention ---------------------------------------------------------------------------

    def prune(self, now_ns: int | None = None) -> dict[str, int]:
        """Delete spans, traces and judgements older than the retention (series are kept)."""
        if self.retain_seconds == 0:
            return {"spans": 0, "traces": 0}
        cutoff = (now_ns or time.time_ns()) - self.retain_seconds * 1_000_000_000
        with self.db.transaction():
            old = [r[0] for r in self.db.execute(
                "SELECT trace_id FROM traces WHERE ended_ns < ?", [cutoff])]  # fmt: skip
            for part in in_slices(old):
                marks = placeholders(len(part))
                self.db.execute(f"DELETE FROM judgements WHERE trace_id IN ({marks})", part)
            spans = int(self.db.execute("SELECT COUNT(*) FROM spans WHERE end_ns < ?", [cutoff])[0][0])
            self.db.execute("DELETE FROM spans WHERE end_ns < ?", [cutoff])
            self.db.execute("DELETE FROM traces WHERE ended_ns < ?", [cutoff])
        return {"spans": spans, "traces": len(old)}

    def size_bytes(self) -> int:
        return self.db.size_bytes()


def _filtered(sql: str, params: list[Any], **conditions: Any) -> tuple[str, list[Any]]:
    """``sql`` (ending in a WHERE clause) narrowed by every condition whose value is not None:
    ``column=value`` (equality) or ``"column <"=value``."""
    params = list(params)
    for column, value in conditions.items():
        if value is not None:
            sql += f" AND {column} ?" if " " in column else f" AND {column} = ?"
            params.append(value)
    return sql, params


MAX_SECONDS = 100 * 366 * 86400  # nanoseconds of a century still fit a 64-bit integer


def _check_settings(window: int, retain: int) -> None:
    if not 1 <= window <= 366 * 86400:
        raise StoreError(f"the window must be from 1 second to a year, not {window} s")
    if not 0 <= retain <= MAX_SECONDS:
        raise StoreError(f"the retention must be 0 (keep forever) or up to a century of "
                         f"seconds, not {retain}")  # fmt: skip
