"""The monitoring store: its tables, its migrations and every query, on SQLAlchemy Core
(SQLite and PostgreSQL), one repository per thing it holds (traces, windows, judgements,
canaries, alerts: :class:`MonitorStore`'s attributes). Nothing outside this package writes
SQL (``tests/monitor/test_store_owns_sql.py`` checks)."""

from cofe.monitor.store._alert_log import AlertLog
from cofe.monitor.store._canaries import Canaries, CanaryCase, CanaryMeasure, CanaryRoundRow
from cofe.monitor.store._codec import CANARY, TRAFFIC
from cofe.monitor.store._engine import POSTGRES_SCHEMES, StoreError, shown_location
from cofe.monitor.store._ingest import MAX_TRACE_SPANS, IngestReport
from cofe.monitor.store._judgements import Judgements
from cofe.monitor.store._migrations import STORE_SCHEMA_VERSION
from cofe.monitor.store._store import DEFAULT_RETAIN_SECONDS, DEFAULT_WINDOW_SECONDS, MonitorStore
from cofe.monitor.store._traces import Traces
from cofe.monitor.store._windows import WindowRows, Windows

__all__ = [
    "CANARY",
    "DEFAULT_RETAIN_SECONDS",
    "DEFAULT_WINDOW_SECONDS",
    "MAX_TRACE_SPANS",
    "POSTGRES_SCHEMES",
    "STORE_SCHEMA_VERSION",
    "TRAFFIC",
    "AlertLog",
    "Canaries",
    "CanaryCase",
    "CanaryMeasure",
    "CanaryRoundRow",
    "IngestReport",
    "Judgements",
    "MonitorStore",
    "StoreError",
    "Traces",
    "WindowRows",
    "Windows",
    "shown_location",
]
