"""The store's queries of canary rounds, alerts and judgements (what alerting, the canary,
the judges and the dashboard read and write), returning frozen dataclasses or named rows.
A mixin of :class:`~cofe.monitor.store.MonitorStore`: the store's one home for SQL."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from cofe.monitor.store import _tables as t
from cofe.monitor.store._windows_queries import finite_row

T = TypeVar("T")
IN_SLICE = 10_000  # values of one IN list (SQLite and psycopg cap a statement's parameters)


def slices(items: Sequence[T], size: int = IN_SLICE) -> Iterator[Sequence[T]]:
    """Slices of ``items`` for ``IN`` lists."""
    for at in range(0, len(items), size):
        yield items[at : at + size]


@dataclass(frozen=True)
class CanaryRoundRow:
    round_id: str
    started_ns: int
    finished_ns: int
    evalset_sha256: str | None
    pipeline: str
    samples: int
    answered: int
    run_dir: str | None


@dataclass(frozen=True)
class CanaryCase:
    round_id: str
    sample_id: str
    trace_id: str | None
    query: str
    verdict: str
    stage: str | None
    evidence: str  # JSON: {"explanation", "points"}


@dataclass(frozen=True)
class CanaryMeasure:
    step: str
    stage: str
    measure: str
    value: float | None
    n: int
    unscored: int


_ALERT_COLUMNS = (
    "alert_id",
    "rule",
    "fired_ns",
    "origin",
    "stage",
    "measure",
    "severity",
    "window_start_ns",
    "window_end_ns",
    "baseline",
    "current",
    "ci_low",
    "ci_high",
    "p_value",
    "message",
    "examples",
)


def _all(query: Any, connection: Connection) -> list[Any]:
    return list(connection.execute(query).all())


def _rounds() -> Any:
    """The columns of a CanaryRoundRow, in its field order."""
    r = t.canary_rounds.c
    return sa.select(
        r.round_id,
        r.started_ns,
        r.finished_ns,
        r.evalset_sha256,
        r.pipeline,
        r.samples,
        r.answered,
        r.run_dir,
    )


class Queries:
    """Canary rounds, alerts and judgements (see the module)."""

    if TYPE_CHECKING:  # MonitorStore's (``_store``)

        def _reading(self, work: Callable[[Connection], T]) -> T: ...

        def _writing(self, work: Callable[[Connection], T]) -> T: ...

    _mark_dirty: Callable[[Connection, Iterable[tuple[str, int]]], None]
    window_of: Callable[[int], int]

    # --- canary rounds -----------------------------------------------------------------------

    def add_canary_round(
        self,
        round_row: dict[str, Any],
        measures: Iterable[dict[str, Any]],
        cases: Iterable[dict[str, Any]],
        scores: Iterable[dict[str, Any]],
    ) -> None:
        """A scored round: its row, measures, cases and per-sample scores, in one transaction."""
        measures, cases, scores = list(measures), list(cases), list(scores)

        def add(connection: Connection) -> None:
            connection.execute(t.canary_rounds.insert(), [round_row])
            for table, rows in (
                (t.canary_measures, measures),
                (t.canary_cases, cases),
                (t.canary_scores, scores),
            ):
                if rows:
                    connection.execute(table.insert(), rows)

        self._writing(add)

    def canary_series(
        self, *, since_ns: int = 0, stage: str | None = None, measure: str | None = None
    ) -> list[dict[str, Any]]:
        """Canary measures per round, oldest first."""
        r, m = t.canary_rounds.c, t.canary_measures.c
        query = (
            sa.select(
                r.started_ns.label("start_ns"),
                m.round_id,
                m.stage,
                m.step,
                m.measure,
                m.value,
                m.n,
                m.unscored,
            )
            .join_from(t.canary_measures, t.canary_rounds, r.round_id == m.round_id)
            .where(r.started_ns >= since_ns)
        )
        if stage is not None:
            query = query.where(m.stage == stage)
        if measure is not None:
            query = query.where(m.measure == measure)
        query = query.order_by(r.started_ns, m.step, m.measure)
        return self._reading(
            lambda c: [finite_row(dict(row._mapping), None) for row in c.execute(query)]
        )

    def canary_rounds(
        self,
        *,
        since_ns: int | None = None,
        until_ns: int | None = None,
        finished_by_ns: int | None = None,
        newest_first: bool = False,
        until_inclusive: bool = False,
    ) -> list[CanaryRoundRow]:
        """Rounds started in ``[since_ns, until_ns)`` (``]`` when ``until_inclusive``) and
        finished by ``finished_by_ns``, oldest first unless ``newest_first``."""
        r = t.canary_rounds.c
        query = _rounds()
        if since_ns is not None:
            query = query.where(r.started_ns >= since_ns)
        if until_ns is not None:
            query = query.where(
                r.started_ns <= until_ns if until_inclusive else r.started_ns < until_ns
            )
        if finished_by_ns is not None:
            query = query.where(r.finished_ns <= finished_by_ns)
        query = query.order_by(r.started_ns.desc() if newest_first else r.started_ns)
        return self._reading(lambda c: [CanaryRoundRow(*row) for row in c.execute(query)])

    def canary_round(self, round_id: str) -> CanaryRoundRow | None:
        query = _rounds().where(t.canary_rounds.c.round_id == round_id)
        row = self._reading(lambda c: c.execute(query).first())
        return CanaryRoundRow(*row) if row is not None else None

    def neighbour_rounds(self, started_ns: int) -> tuple[str | None, str | None]:
        """The rounds just before and just after one started at ``started_ns``."""
        r = t.canary_rounds.c

        def read(c: Connection) -> tuple[str | None, str | None]:
            before = c.scalar(
                sa.select(r.round_id)
                .where(r.started_ns < started_ns)
                .order_by(r.started_ns.desc())
                .limit(1)
            )
            after = c.scalar(
                sa.select(r.round_id)
                .where(r.started_ns > started_ns)
                .order_by(r.started_ns)
                .limit(1)
            )
            return before, after

        return self._reading(read)

    def canary_measures(
        self, round_id: str, *, except_step: str | None = None
    ) -> list[CanaryMeasure]:
        m = t.canary_measures.c
        query = sa.select(m.step, m.stage, m.measure, m.value, m.n, m.unscored).where(
            m.round_id == round_id
        )
        if except_step is not None:
            query = query.where(m.step != except_step)
        return self._reading(lambda c: [CanaryMeasure(*row) for row in c.execute(query)])

    def canary_measure(
        self, round_id: str, measure: str, stage: str, step: str | None = None
    ) -> tuple[float | None, int] | None:
        """``(value, n)`` of a measure as the round's summary lists it, if it does."""
        m = t.canary_measures.c
        query = sa.select(m.value, m.n).where(
            m.round_id == round_id, m.measure == measure, m.stage == stage
        )
        if step is not None:
            query = query.where(m.step == step)
        row = self._reading(lambda c: c.execute(query).first())
        return (row[0], int(row[1])) if row is not None else None

    def canary_cases(
        self, round_id: str, sample_ids: Sequence[str] | None = None
    ) -> list[CanaryCase]:
        """The round's cases (those of ``sample_ids`` only, when given), by sample id."""
        k = t.canary_cases.c
        query = sa.select(t.canary_cases).where(k.round_id == round_id).order_by(k.sample_id)
        if sample_ids is None:
            return self._reading(lambda c: [CanaryCase(*row) for row in c.execute(query)])

        def read(part: Sequence[str], c: Connection) -> list[CanaryCase]:
            return [CanaryCase(*row) for row in c.execute(query.where(k.sample_id.in_(part)))]

        return [
            case for part in slices(list(sample_ids)) for case in self._reading(partial(read, part))
        ]

    def cases_of_trace(self, trace_id: str) -> list[tuple[str, str]]:
        """``(round id, sample id)`` of the canary cases a trace answered."""
        k = t.canary_cases.c
        query = sa.select(k.round_id, k.sample_id).where(k.trace_id == trace_id)
        return self._reading(lambda c: [(row[0], row[1]) for row in c.execute(query)])

    def canary_sample_scores(self, round_id: str, step: str, measure: str) -> dict[str, float]:
        s = t.canary_scores.c
        query = sa.select(s.sample_id, s.value).where(
            s.round_id == round_id, s.step == step, s.measure == measure
        )
        return self._reading(lambda c: {row[0]: float(row[1]) for row in c.execute(query)})

    def verdict_counts(self, round_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Cases per verdict of each round."""
        k = t.canary_cases.c
        out: dict[str, dict[str, int]] = {}
        for part in slices(list(round_ids)):
            query = (
                sa.select(k.round_id, k.verdict, sa.func.count())
                .where(k.round_id.in_(part))
                .group_by(k.round_id, k.verdict)
            )
            for round_id, verdict, n in self._reading(partial(_all, query)):
                out.setdefault(round_id, {})[verdict] = int(n)
        return out

    # --- alerts ------------------------------------------------------------------------------

    def add_alerts(self, alerts: Iterable[dict[str, Any]]) -> None:
        """Alerts as rows (their examples as JSON; where they were delivered: none yet)."""
        rows = [{**row, "delivered": "{}"} for row in alerts]
        if rows:
            self._writing(lambda c: c.execute(t.alerts.insert(), rows))

    def last_alerted_window(self, rule: str) -> int | None:
        """The start of the latest window the rule alerted, if any."""
        a = t.alerts.c
        value = self._reading(
            lambda c: c.scalar(sa.select(sa.func.max(a.window_start_ns)).where(a.rule == rule))
        )
        return int(value) if value is not None else None

    def _alerts_in(self, start_ns: int, end_ns: int) -> Any:
        a = t.alerts.c
        return sa.or_(
            sa.and_(a.fired_ns >= start_ns, a.fired_ns < end_ns),
            sa.and_(a.window_start_ns >= start_ns, a.window_start_ns < end_ns),
        )

    def alerts(self, start_ns: int, end_ns: int, *, limit: int) -> list[dict[str, Any]]:
        """Alerts fired, or about a window that started, in ``[start_ns, end_ns)``; newest first."""
        a = t.alerts.c
        query = (
            sa.select(*(a[name] for name in _ALERT_COLUMNS))
            .where(self._alerts_in(start_ns, end_ns))
            .order_by(a.fired_ns.desc(), a.alert_id)
            .limit(limit)
        )
        return self._reading(lambda c: [dict(row._mapping) for row in c.execute(query)])

    def alert_count(self, start_ns: int, end_ns: int) -> int:
        query = (
            sa.select(sa.func.count())
            .select_from(t.alerts)
            .where(self._alerts_in(start_ns, end_ns))
        )
        return int(self._reading(lambda c: c.scalar(query)) or 0)

    def record_delivery(self, alert_id: str, where: str, outcome: str) -> None:
        """Where an alert went and how (``alerts.delivered``: ``{where: outcome}``)."""
        a = t.alerts.c

        def record(c: Connection) -> None:
            raw = c.scalar(sa.select(a.delivered).where(a.alert_id == alert_id))
            delivered = json.loads(raw) if raw else {}
            delivered[where] = outcome
            c.execute(
                t.alerts.update()
                .where(a.alert_id == alert_id)
                .values(delivered=json.dumps(delivered))
            )

        self._writing(record)

    def deliveries(self, alert_id: str) -> dict[str, str]:
        a = t.alerts.c
        raw = self._reading(
            lambda c: c.scalar(sa.select(a.delivered).where(a.alert_id == alert_id))
        )
        return json.loads(raw) if raw else {}

    # --- judgements --------------------------------------------------------------------------

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
        return self._reading(lambda c: list(c.scalars(query)))

    def add_judgements(
        self, rows: Iterable[dict[str, Any]], windows: Iterable[tuple[str, int]]
    ) -> None:
        """Judgements (a trace's measure judged once: a second is ignored), and the windows
        whose series they change."""
        rows, marks = list(rows), list(windows)

        def add(c: Connection) -> None:
            if rows:
                dialect = postgresql if c.dialect.name == "postgresql" else sqlite
                c.execute(
                    dialect.insert(t.judgements).on_conflict_do_nothing(
                        index_elements=["trace_id", "measure"]
                    ),
                    rows,
                )
            self._mark_dirty(c, marks)

        self._writing(add)

    def judgements_of(
        self, trace_ids: Sequence[str]
    ) -> list[tuple[str, float | None, str | None, str]]:
        """``(measure, value, reason, model)`` of every judgement of the traces."""
        j = t.judgements.c
        out: list[tuple[str, float | None, str | None, str]] = []
        for part in slices(list(trace_ids)):
            query = sa.select(j.measure, j.value, j.reason, j.model).where(j.trace_id.in_(part))
            out += [(row[0], row[1], row[2], row[3]) for row in self._reading(partial(_all, query))]
        return out

    def set_judge_gate(
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
            self._mark_dirty(c, [("traffic", start) for start in starts])

        self._writing(write)

    def judge_gate(
        self, model: str, prompt_version: str
    ) -> dict[str, tuple[float | None, int, str | None]] | None:
        """``{measure: (auc, pairs, failed)}`` from the judge's controls; None if none were
        judged for this model and prompt version."""
        g = t.judge_gates.c
        query = sa.select(g.measure, g.auc, g.pairs, g.failed).where(
            g.model == model, g.prompt_version == prompt_version
        )
        rows = self._reading(partial(_all, query))
        return {r[0]: (r[1], int(r[2]), r[3]) for r in rows} if rows else None

    # --- what the store holds ---------------------------------------------------------------

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

        return self._reading(count)

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
        for problems, ignored in self._reading(lambda connection: connection.execute(query).all()):
            for reason in json.loads(problems):
                key = re.sub(r"\d+", "N", reason)
                out[key] = out.get(key, 0) + 1
            for kind, n in json.loads(ignored).items():
                key = f"spans of unknown kind {kind}"
                out[key] = out.get(key, 0) + int(n)
        return out
