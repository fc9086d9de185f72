"""The store's judgements (``store.judgements``): the judges' measures of sampled traffic
traces, and each judge's gate -- what its controls said, per measure, which decides what
its judged signals show."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cofe.monitor.store import _tables as t
from cofe.monitor.store._engine import Engine, slices, upsert
from cofe.monitor.store._windows import mark_dirty


def _all(query: Any, connection: Connection) -> list[Any]:
    return list(connection.execute(query).all())


class Judgements:
    """Judgements and judges' gates (see the module). ``window_of`` places a judged trace's
    start in the window a changed gate marks to be computed again."""

    def __init__(self, db: Engine, window_of: Callable[[int], int]) -> None:
        self.db, self.window_of = db, window_of

    def unjudged_traffic(self, since_ns: int) -> list[str]:
        """Answered traffic traces started at or after ``since_ns`` with no judgement, oldest
        first."""
        tr, j = t.traces.c, t.judgements.c
        judged = sa.select(j.trace_id).where(j.trace_id == tr.trace_id).exists()
        query = (
            sa.select(tr.trace_id)
            .where(
                tr.origin == "traffic", tr.answer.is_not(None), tr.started_ns >= since_ns, ~judged
            )
            .order_by(tr.started_ns)
        )
        return self.db.reading(lambda c: list(c.scalars(query)))

    def add(self, rows: Iterable[dict[str, Any]], windows: Iterable[tuple[str, int]]) -> None:
        """Judgements (a trace's measure judged once: a second is ignored), and the windows
        whose series they change."""
        rows, marks = list(rows), list(windows)

        def add(c: Connection) -> None:
            if rows:
                c.execute(
                    upsert(t.judgements, c).on_conflict_do_nothing(
                        index_elements=["trace_id", "measure"]
                    ),
                    rows,
                )
            mark_dirty(c, marks)

        self.db.writing(add)

    def of(self, trace_ids: Sequence[str]) -> list[tuple[str, float | None, str | None, str]]:
        """``(measure, value, reason, model)`` of every judgement of the traces."""
        j = t.judgements.c
        out: list[tuple[str, float | None, str | None, str]] = []
        for part in slices(list(trace_ids)):
            query = sa.select(j.measure, j.value, j.reason, j.model).where(j.trace_id.in_(part))
            out += [
                (row[0], row[1], row[2], row[3]) for row in self.db.reading(partial(_all, query))
            ]
        return out

    def set_gate(
        self,
        model: str,
        prompt_version: str,
        rows: Sequence[tuple[str, float | None, int, str | None]],
    ) -> None:
        """What a judge's controls said, per measure ``(measure, auc, pairs, failed)``,
        replacing what they said before; every window with judged traffic is computed again
        (the gate decides what its judged signals show)."""
        now = time.time_ns()
        g, tr, j = t.judge_gates.c, t.traces.c, t.judgements.c

        def write(c: Connection) -> None:
            c.execute(
                t.judge_gates.delete().where(g.model == model, g.prompt_version == prompt_version)
            )
            if rows:
                c.execute(
                    t.judge_gates.insert(),
                    [
                        {
                            "model": model,
                            "prompt_version": prompt_version,
                            "measure": measure,
                            "auc": auc,
                            "pairs": pairs,
                            "failed": failed,
                            "judged_ns": now,
                        }
                        for measure, auc, pairs, failed in rows
                    ],
                )
            judged = sa.select(tr.started_ns).where(
                tr.origin == "traffic",
                sa.select(j.trace_id).where(j.trace_id == tr.trace_id, j.model == model).exists(),
            )
            starts = {self.window_of(int(ns)) for ns in c.scalars(judged)}
            mark_dirty(c, [("traffic", start) for start in starts])

        self.db.writing(write)

    def gate(
        self, model: str, prompt_version: str
    ) -> dict[str, tuple[float | None, int, str | None]] | None:
        """``{measure: (auc, pairs, failed)}`` from the judge's controls; None if none were
        judged for this model and prompt version."""
        g = t.judge_gates.c
        query = sa.select(g.measure, g.auc, g.pairs, g.failed).where(
            g.model == model, g.prompt_version == prompt_version
        )
        rows = self.db.reading(partial(_all, query))
        return {r[0]: (r[1], int(r[2]), r[3]) for r in rows} if rows else None
