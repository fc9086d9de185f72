"""The store's log of alerts (``store.alerts``): alerts fired, the last window a rule alerted, and
where each alert was delivered."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cofe.monitor.store import _tables as t
from cofe.monitor.store._engine import Engine

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


class AlertLog:
    """Alerts fired and their deliveries, written and read (see the module)."""

    def __init__(self, db: Engine) -> None:
        self.db = db

    def add(self, alerts: Iterable[dict[str, Any]]) -> None:
        """Alerts as rows (their examples as JSON; where they were delivered: none yet)."""
        rows = [{**row, "delivered": "{}"} for row in alerts]
        if rows:
            self.db.writing(lambda c: c.execute(t.alerts.insert(), rows))

    def last_window(self, rule: str) -> int | None:
        """The start of the latest window the rule alerted, if any."""
        a = t.alerts.c
        value = self.db.reading(
            lambda c: c.scalar(sa.select(sa.func.max(a.window_start_ns)).where(a.rule == rule))
        )
        return int(value) if value is not None else None

    def _in(self, start_ns: int, end_ns: int) -> Any:
        a = t.alerts.c
        return sa.or_(
            sa.and_(a.fired_ns >= start_ns, a.fired_ns < end_ns),
            sa.and_(a.window_start_ns >= start_ns, a.window_start_ns < end_ns),
        )

    def between(self, start_ns: int, end_ns: int, *, limit: int) -> list[dict[str, Any]]:
        """Alerts fired, or about a window that started, in ``[start_ns, end_ns)``; newest first."""
        a = t.alerts.c
        query = (
            sa.select(*(a[name] for name in _ALERT_COLUMNS))
            .where(self._in(start_ns, end_ns))
            .order_by(a.fired_ns.desc(), a.alert_id)
            .limit(limit)
        )
        return self.db.reading(lambda c: [dict(row._mapping) for row in c.execute(query)])

    def count(self, start_ns: int, end_ns: int) -> int:
        query = sa.select(sa.func.count()).select_from(t.alerts).where(self._in(start_ns, end_ns))
        return int(self.db.reading(lambda c: c.scalar(query)) or 0)

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

        self.db.writing(record)

    def deliveries(self, alert_id: str) -> dict[str, str]:
        a = t.alerts.c
        raw = self.db.reading(
            lambda c: c.scalar(sa.select(a.delivered).where(a.alert_id == alert_id))
        )
        return json.loads(raw) if raw else {}
