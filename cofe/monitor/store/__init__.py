"""The monitoring store: its tables, its migrations and every query, on SQLAlchemy Core
(SQLite and PostgreSQL). Nothing outside this package writes SQL
(``tests/monitor/test_store_owns_sql.py`` checks)."""

from cofe.monitor.store._codec import CANARY, TRAFFIC
from cofe.monitor.store._engine import POSTGRES_SCHEMES, StoreError, shown_location
from cofe.monitor.store._ingest import MAX_TRACE_SPANS, IngestReport
from cofe.monitor.store._migrations import STORE_SCHEMA_VERSION
from cofe.monitor.store._queries import CanaryCase, CanaryMeasure, CanaryRoundRow
from cofe.monitor.store._store import DEFAULT_RETAIN_SECONDS, DEFAULT_WINDOW_SECONDS, MonitorStore

__all__ = [
    "CANARY",
    "DEFAULT_RETAIN_SECONDS",
    "DEFAULT_WINDOW_SECONDS",
    "MAX_TRACE_SPANS",
    "POSTGRES_SCHEMES",
    "STORE_SCHEMA_VERSION",
    "TRAFFIC",
    "CanaryCase",
    "CanaryMeasure",
    "CanaryRoundRow",
    "IngestReport",
    "MonitorStore",
    "StoreError",
    "shown_location",
]
