"""The store's canary rounds (``store.canaries``): a scored round's row, measures, cases and
per-sample scores, written in one transaction and read back as frozen dataclasses."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cofe.monitor.store import _tables as t
from cofe.monitor.store._codec import finite_row
from cofe.monitor.store._engine import Engine, slices


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


class Canaries:
    """Canary rounds written and read (see the module)."""

    def __init__(self, db: Engine) -> None:
        self.db = db

    def add_round(
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

        self.db.writing(add)

    def series(
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
        return self.db.reading(
            lambda c: [finite_row(dict(row._mapping), None) for row in c.execute(query)]
        )

    def rounds(
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
        return self.db.reading(lambda c: [CanaryRoundRow(*row) for row in c.execute(query)])

    def round(self, round_id: str) -> CanaryRoundRow | None:
        query = _rounds().where(t.canary_rounds.c.round_id == round_id)
        row = self.db.reading(lambda c: c.execute(query).first())
        return CanaryRoundRow(*row) if row is not None else None

    def neighbours(self, started_ns: int) -> tuple[str | None, str | None]:
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

        return self.db.reading(read)

    def measures(self, round_id: str, *, except_step: str | None = None) -> list[CanaryMeasure]:
        m = t.canary_measures.c
        query = sa.select(m.step, m.stage, m.measure, m.value, m.n, m.unscored).where(
            m.round_id == round_id
        )
        if except_step is not None:
            query = query.where(m.step != except_step)
        return self.db.reading(lambda c: [CanaryMeasure(*row) for row in c.execute(query)])

    def measure(
        self, round_id: str, measure: str, stage: str, step: str | None = None
    ) -> tuple[float | None, int] | None:
        """``(value, n)`` of a measure as the round's summary lists it, if it does."""
        m = t.canary_measures.c
        query = sa.select(m.value, m.n).where(
            m.round_id == round_id, m.measure == measure, m.stage == stage
        )
        if step is not None:
            query = query.where(m.step == step)
        row = self.db.reading(lambda c: c.execute(query).first())
        return (row[0], int(row[1])) if row is not None else None

    def cases(self, round_id: str, sample_ids: Sequence[str] | None = None) -> list[CanaryCase]:
        """The round's cases (those of ``sample_ids`` only, when given), by sample id."""
        k = t.canary_cases.c
        query = sa.select(t.canary_cases).where(k.round_id == round_id).order_by(k.sample_id)
        if sample_ids is None:
            return self.db.reading(lambda c: [CanaryCase(*row) for row in c.execute(query)])

        def read(part: Sequence[str], c: Connection) -> list[CanaryCase]:
            return [CanaryCase(*row) for row in c.execute(query.where(k.sample_id.in_(part)))]

        return [
            case
            for part in slices(list(sample_ids))
            for case in self.db.reading(partial(read, part))
        ]

    def cases_of_trace(self, trace_id: str) -> list[tuple[str, str]]:
        """``(round id, sample id)`` of the canary cases a trace answered."""
        k = t.canary_cases.c
        query = sa.select(k.round_id, k.sample_id).where(k.trace_id == trace_id)
        return self.db.reading(lambda c: [(row[0], row[1]) for row in c.execute(query)])

    def sample_scores(self, round_id: str, step: str, measure: str) -> dict[str, float]:
        s = t.canary_scores.c
        query = sa.select(s.sample_id, s.value).where(
            s.round_id == round_id, s.step == step, s.measure == measure
        )
        return self.db.reading(lambda c: {row[0]: float(row[1]) for row in c.execute(query)})

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
            for round_id, verdict, n in self.db.reading(partial(_all, query)):
                out.setdefault(round_id, {})[verdict] = int(n)
        return out
