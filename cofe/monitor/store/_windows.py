"""The store's series per time window (``store.windows``): the windows marked since they
were last computed, each one's rows computed with no transaction held open and stored
(:meth:`Windows.refresh`), and the stored series read.

What a window's rows are is domain logic the store does not know: ``refresh`` is handed
the function that computes them (``cofe.monitor.analysis.refresh_windows`` hands it the
signals), so the store imports nothing above it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cofe.monitor.store import _tables as t
from cofe.monitor.store._codec import TRAFFIC, _ns, finite_row
from cofe.monitor.store._engine import Engine, upsert

_PRIME = 1_000_000_007  # update times summed modulo this: a window's stamp fits 64 bits

WindowRows = Callable[[str, int, int], list[tuple[Any, ...]]]
"""``(origin, start_ns, end_ns) -> [(stage, signal, value, n, note), ...]``: one window's
series, computed from its traces and judgements."""


def mark_dirty(connection: Connection, windows: Iterable[tuple[str, int]]) -> None:
    """Mark ``(origin, start_ns)`` windows to be computed again, inside the caller's write
    (the traces and judgements that change a window mark it in their own transaction)."""
    rows = [{"origin": o, "start_ns": s} for o, s in sorted(windows)]
    if rows:
        insert = upsert(t.dirty_windows, connection).on_conflict_do_nothing(
            index_elements=["origin", "start_ns"]
        )
        connection.execute(insert, rows)


class Windows:
    """Series per window: refreshed, stored and read (see the module)."""

    def __init__(self, db: Engine, window_ns: int) -> None:
        self.db, self.window_ns = db, window_ns
        # when this store object last computed each still-open window (refresh's open_every_s)
        self._open_computed: dict[tuple[str, int], float] = {}

    def mark_dirty(self, windows: Iterable[tuple[str, int]]) -> None:
        """Mark windows to be computed again (their traces or judgements changed)."""
        marks = list(windows)
        self.db.writing(lambda connection: mark_dirty(connection, marks))

    def refresh(
        self, rows_of: WindowRows, *, open_every_s: float = 0.0, now_ns: int | None = None
    ) -> int:
        """Recompute the series of every window that received traces (or judgements) since
        it was last computed, each outside any write transaction (``_refresh_window``),
        its rows from ``rows_of``; returns how many windows were computed.

        ``open_every_s``: a window still open at ``now_ns`` (traffic keeps landing in it) is
        recomputed at most that often by this store object -- its computing is the cost that
        grows with its traces, and it would be stale again within seconds; it stays marked,
        so the next refresh, or any reader's plain refresh, computes it. Closed windows,
        which alerts read, are computed at once."""
        dirty = self.db.reading(
            lambda connection: connection.execute(
                sa.select(t.dirty_windows).order_by(t.dirty_windows.c.start_ns)
            ).all()
        )
        now = time.time_ns() if now_ns is None else now_ns
        computed = 0
        for origin, start in dirty:
            start, end = int(start), _ns(int(start) + self.window_ns)
            if open_every_s > 0 and end > now:
                last = self._open_computed.get((origin, start))
                if last is not None and time.monotonic() - last < open_every_s:
                    continue
                self._open_computed[(origin, start)] = time.monotonic()
            self._refresh_window(rows_of, origin, start, end)
            computed += 1
        return computed

    def series(
        self,
        *,
        origin: str = TRAFFIC,
        since_ns: int = 0,
        until_ns: int | None = None,
        stage: str | None = None,
        signal: str | None = None,
    ) -> list[dict[str, Any]]:
        """Stored series rows, oldest first (refresh first to include recent traces)."""
        s = t.series.c
        query = sa.select(s.start_ns, s.stage, s.signal, s.value, s.n, s.note).where(
            s.origin == origin, s.window_ns == self.window_ns, s.start_ns >= _ns(since_ns)
        )
        if until_ns is not None:
            query = query.where(s.start_ns < _ns(until_ns))
        if stage is not None:
            query = query.where(s.stage == stage)
        if signal is not None:
            query = query.where(s.signal == signal)
        query = query.order_by(s.start_ns, s.stage, s.signal)
        return self.db.reading(
            lambda connection: [finite_row(dict(r._mapping)) for r in connection.execute(query)]
        )

    def _refresh_window(self, rows_of: WindowRows, origin: str, start: int, end: int) -> None:
        """One window's series, computed with no transaction held open: its stamp (its
        traces' count and update times, its judgements') read first, its rows computed,
        then one short transaction takes its mark, replaces its series and -- if the stamp
        changed meanwhile (a batch landed in it) -- marks it again for the next refresh.
        A window is never left unmarked with rows missing a batch, whenever the process
        stops; writers wait only for that last transaction, never for the computing. A
        second refresher that finds the mark taken leaves the window to the first."""
        before = self.db.reading(partial(self._window_stamp, origin, start, end))
        rows = rows_of(origin, start, end)
        self.db.writing(partial(self._store_window, origin, start, end, rows, before))

    def _window_stamp(
        self, origin: str, start: int, end: int, connection: Connection
    ) -> tuple[Any, ...]:
        c, j = t.traces.c, t.judgements.c
        inside = (c.origin == origin, c.started_ns >= start, c.started_ns < end)
        traces = connection.execute(
            sa.select(
                sa.func.count(), sa.func.max(c.updated_ns), sa.func.sum(c.updated_ns % _PRIME)
            ).where(*inside)
        ).one()
        judged = connection.execute(
            sa.select(
                sa.func.count(), sa.func.max(j.judged_ns), sa.func.sum(j.judged_ns % _PRIME)
            ).where(j.trace_id.in_(sa.select(c.trace_id).where(*inside)))
        ).one()
        return (*traces, *judged)

    def _store_window(
        self,
        origin: str,
        start: int,
        end: int,
        rows: list[tuple[Any, ...]],
        before: tuple[Any, ...],
        connection: Connection,
    ) -> None:
        d, s = t.dirty_windows.c, t.series.c
        taken = connection.execute(
            t.dirty_windows.delete()
            .where(d.origin == origin, d.start_ns == start)
            .returning(d.start_ns)
        ).all()
        if not taken:  # another refresher has it
            return
        connection.execute(
            t.series.delete().where(
                s.origin == origin, s.window_ns == self.window_ns, s.start_ns == start
            )
        )
        if rows:
            connection.execute(
                t.series.insert(),
                [
                    {
                        "origin": origin,
                        "window_ns": self.window_ns,
                        "start_ns": start,
                        "stage": stage,
                        "signal": signal,
                        "value": value,
                        "n": n,
                        "note": note,
                    }
                    for stage, signal, value, n, note in rows
                ],
            )
        if self._window_stamp(origin, start, end, connection) != before:
            mark_dirty(connection, [(origin, start)])  # computed again next time

    # --- the dashboard -----------------------------------------------------------------------

    def instants(self, origin: str) -> list[int]:
        """Every instant something was recorded at: window starts of ``origin``'s series,
        canary round starts, alerted windows."""
        s = t.series.c

        def read(c: Connection) -> list[int]:
            out = [
                int(v)
                for v in c.scalars(
                    sa.select(s.start_ns)
                    .distinct()
                    .where(s.origin == origin, s.window_ns == self.window_ns)
                )
            ]
            out += [int(v) for v in c.scalars(sa.select(t.canary_rounds.c.started_ns))]
            out += [int(v) for v in c.scalars(sa.select(t.alerts.c.window_start_ns))]
            return out

        return self.db.reading(read)

    def pending(self) -> int:
        """Windows marked to be computed again."""
        return int(
            self.db.reading(
                lambda c: c.scalar(sa.select(sa.func.count()).select_from(t.dirty_windows))
            )
            or 0
        )
