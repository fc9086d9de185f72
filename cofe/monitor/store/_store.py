"""The monitoring store: its engine, its schema and migrations, its settings (the window
and the retention) and one repository per thing it holds --

- ``traces`` (:class:`~cofe.monitor.store._traces.Traces`): spans in, stage records and
  chunk texts out;
- ``windows`` (:class:`~cofe.monitor.store._windows.Windows`): per-stage series per time
  window;
- ``judgements`` (:class:`~cofe.monitor.store._judgements.Judgements`): judged traffic and
  the judges' gates;
- ``canaries`` (:class:`~cofe.monitor.store._canaries.Canaries`): scored canary rounds;
- ``alerts`` (:class:`~cofe.monitor.store._alert_log.AlertLog`): alerts and their deliveries --

each a small class over the store's one :class:`~cofe.monitor.store._engine.Engine`.
What spans several tables (the row counts, retention) is the store's own.

Embedded default: SQLite (a file; no server; WAL lets the dashboard and queries read
while the collector writes; in the standard library). DuckDB was the other candidate:
faster for column scans, but its single-writer file lock would keep readers out while
the collector runs, and the work here is many small transactional inserts plus
index-range reads of one window -- a row store's job. PostgreSQL runs the same queries
for a shared deployment. Every query is in this package, written once with SQLAlchemy Core.
"""

from __future__ import annotations

import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cofe.monitor.store import _tables as t
from cofe.monitor.store._alert_log import AlertLog
from cofe.monitor.store._canaries import Canaries
from cofe.monitor.store._engine import Engine, StoreError, shown_location
from cofe.monitor.store._judgements import Judgements
from cofe.monitor.store._migrations import (
    MIGRATIONS,
    STORE_SCHEMA_VERSION,
    lock_schema,
    set_version,
    stored_version,
    tables_present,
)
from cofe.monitor.store._traces import Traces
from cofe.monitor.store._windows import Windows

DEFAULT_WINDOW_SECONDS = 300
DEFAULT_RETAIN_SECONDS = 7 * 24 * 3600
MAX_SECONDS = 100 * 366 * 86400  # nanoseconds of a century still fit a 64-bit integer


class MonitorStore:
    """Open (creating or migrating) the store at ``location``: a file path for SQLite, or a
    ``postgresql://`` URL. ``window_seconds`` and ``retain_seconds`` are fixed when the store
    is created; later opens read them from the store. ``read_only`` opens an existing store
    at the current version without writing anything, ever (the dashboard). Its
    repositories (see the module) are attributes: ``store.traces.ingest(spans)``,
    ``store.windows.series()``, ``store.alerts.count(start, end)``."""

    traces: Traces
    windows: Windows
    judgements: Judgements
    canaries: Canaries
    alerts: AlertLog

    def __init__(
        self,
        location: str | Path,
        *,
        window_seconds: int | None = None,
        retain_seconds: int | None = None,
        read_only: bool = False,
    ) -> None:
        self.location = shown_location(str(location))  # what messages may print
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
        self.traces = Traces(self.db, self.window_of)
        self.windows = Windows(self.db, self.window_ns)
        self.judgements = Judgements(self.db, self.window_of)
        self.canaries = Canaries(self.db)
        self.alerts = AlertLog(self.db)

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
                    MIGRATIONS[0](connection)
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
                if version not in MIGRATIONS or version == 0:
                    raise StoreError(f"{self.location}: no migration from store schema {version}")
                MIGRATIONS[version](connection)
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

        return self.db.writing(prune)

    def counts(self) -> dict[str, int]:
        """Rows per table, and traces with problems."""
        tables = (t.spans, t.traces, t.chunks, t.series, t.judgements, t.canary_rounds)

        def count(connection: Connection) -> dict[str, int]:
            out = {
                table.name: int(
                    connection.scalar(sa.select(sa.func.count()).select_from(table)) or 0
                )
                for table in tables
            }
            out["traces_with_problems"] = int(
                connection.scalar(
                    sa.select(sa.func.count())
                    .select_from(t.traces)
                    .where(t.traces.c.problems != "[]")
                )
                or 0
            )
            return out

        return self.db.reading(count)

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
