"""The store owns its schema: no SQL outside ``cofe/monitor/store``, no file of
``cofe/monitor`` over 500 lines, and a store written before SQLAlchemy (raw SQL, the same
tables at schema version 3) is read and written as it is."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from cofe.monitor import MonitorStore, refresh_windows
from tests.monitor.conftest import T0, rag_trace

MONITOR = Path(__file__).resolve().parents[2] / "cofe" / "monitor"
SQL = re.compile(
    r"""["'](?:\s*)(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|BEGIN)\b"""
    r"""|\.(?:execute|executemany|exec_driver_sql)\(|sqlite3\.connect|psycopg\.connect""",
    re.IGNORECASE,
)


def test_no_sql_outside_the_store():
    found = []
    for path in sorted(MONITOR.rglob("*.py")):
        if "store" in path.relative_to(MONITOR).parts[:1]:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if SQL.search(line):
                found.append(f"{path.relative_to(MONITOR)}:{number}: {line.strip()}")
    assert found == [], "\n".join(found)


def test_only_the_store_package_imports_sqlalchemy():
    for path in sorted(MONITOR.rglob("*.py")):
        if "store" in path.relative_to(MONITOR).parts[:1]:
            continue
        assert "sqlalchemy" not in path.read_text(encoding="utf-8"), path


# the tables as cofe wrote them before SQLAlchemy (schema version 3), raw
_OLD_SCHEMA = [
    "CREATE TABLE cofe_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE spans (trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent_id TEXT,
        name TEXT NOT NULL, kind TEXT, start_ns BIGINT NOT NULL, end_ns BIGINT NOT NULL,
        status TEXT NOT NULL, status_message TEXT NOT NULL, attributes TEXT NOT NULL,
        events TEXT NOT NULL, received_ns BIGINT NOT NULL, PRIMARY KEY (trace_id, span_id))""",
    "CREATE INDEX spans_start ON spans (start_ns)",
    "CREATE TABLE chunks (chunk_id TEXT PRIMARY KEY, text TEXT NOT NULL, first_seen_ns BIGINT NOT NULL)",
    """CREATE TABLE traces (trace_id TEXT PRIMARY KEY, origin TEXT NOT NULL,
        started_ns BIGINT NOT NULL, ended_ns BIGINT NOT NULL, query TEXT, answer TEXT, pool TEXT,
        context TEXT, latency TEXT NOT NULL, stages TEXT NOT NULL, error_stage TEXT, error TEXT,
        problems TEXT NOT NULL, ignored TEXT NOT NULL, spans INTEGER NOT NULL,
        is_query INTEGER NOT NULL, updated_ns BIGINT NOT NULL)""",
    "CREATE INDEX traces_window ON traces (origin, started_ns)",
    "CREATE INDEX traces_query ON traces (query, started_ns)",
    """CREATE TABLE dirty_windows (origin TEXT NOT NULL, start_ns BIGINT NOT NULL,
        PRIMARY KEY (origin, start_ns))""",
    """CREATE TABLE series (origin TEXT NOT NULL, window_ns BIGINT NOT NULL,
        start_ns BIGINT NOT NULL, stage TEXT NOT NULL, signal TEXT NOT NULL,
        value DOUBLE PRECISION, n INTEGER NOT NULL, note TEXT,
        PRIMARY KEY (origin, window_ns, start_ns, stage, signal))""",
    """CREATE TABLE judgements (trace_id TEXT NOT NULL, measure TEXT NOT NULL,
        value DOUBLE PRECISION, reason TEXT, model TEXT NOT NULL, judged_ns BIGINT NOT NULL,
        PRIMARY KEY (trace_id, measure))""",
    """CREATE TABLE canary_rounds (round_id TEXT PRIMARY KEY, started_ns BIGINT NOT NULL,
        finished_ns BIGINT NOT NULL, evalset_sha256 TEXT, pipeline TEXT NOT NULL,
        samples INTEGER NOT NULL, answered INTEGER NOT NULL, run_dir TEXT, summary TEXT NOT NULL)""",
    """CREATE TABLE canary_measures (round_id TEXT NOT NULL, stage TEXT NOT NULL,
        step TEXT NOT NULL, measure TEXT NOT NULL, value DOUBLE PRECISION, n INTEGER NOT NULL,
        unscored INTEGER NOT NULL, PRIMARY KEY (round_id, step, measure))""",
    """CREATE TABLE canary_cases (round_id TEXT NOT NULL, sample_id TEXT NOT NULL,
        trace_id TEXT, query TEXT NOT NULL, verdict TEXT NOT NULL, stage TEXT,
        evidence TEXT NOT NULL, PRIMARY KEY (round_id, sample_id))""",
    """CREATE TABLE alerts (alert_id TEXT PRIMARY KEY, rule TEXT NOT NULL,
        fired_ns BIGINT NOT NULL, origin TEXT NOT NULL, stage TEXT NOT NULL,
        measure TEXT NOT NULL, severity TEXT NOT NULL, window_start_ns BIGINT NOT NULL,
        window_end_ns BIGINT NOT NULL, baseline DOUBLE PRECISION, current DOUBLE PRECISION,
        ci_low DOUBLE PRECISION, ci_high DOUBLE PRECISION, p_value DOUBLE PRECISION,
        message TEXT NOT NULL, examples TEXT NOT NULL, delivered TEXT NOT NULL)""",
    "CREATE INDEX alerts_fired ON alerts (rule, fired_ns)",
    """CREATE TABLE canary_scores (round_id TEXT NOT NULL, sample_id TEXT NOT NULL,
        step TEXT NOT NULL, measure TEXT NOT NULL, value DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (round_id, step, measure, sample_id))""",
]


def test_a_store_written_before_sqlalchemy_is_read_and_written(tmp_path: Path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as raw:
        for statement in _OLD_SCHEMA:
            raw.execute(statement)
        raw.executemany(
            "INSERT INTO cofe_meta VALUES (?, ?)",
            [("schema_version", "3"), ("window_seconds", "60"), ("retain_seconds", "0")],
        )
        # a trace as the old store wrote it: docs of three fields (before chars was kept)
        raw.execute(
            "INSERT INTO traces VALUES (?, 'traffic', ?, ?, 'old question?', 'old answer',"
            ' ?, ?, \'{"retrieval": 0.1}\', \'["retrieval", "generation"]\', NULL, NULL,'
            " '[]', '{}', 4, 1, ?)",
            ["a" * 32, T0, T0 + 10**9, '[["id:x", 0.5, "x"]]', '[["id:x", 0.5, "x"]]', T0],
        )
        raw.execute(
            "INSERT INTO series VALUES ('traffic', 60000000000, ?, 'all', 'Traces', 1.0, 1, NULL)",
            [T0 - T0 % 60_000_000_000],
        )
    with MonitorStore(path) as store:
        # migrated 3 -> 4: the judges' control gates have their table
        assert store.schema_version == 4 and store.window_seconds == 60
        assert store.judgements.gate("m", "v") is None
        store.judgements.set_gate("m", "v", [("Faithfulness", 0.5, 10, "failed")])
        assert store.judgements.gate("m", "v") == {"Faithfulness": (0.5, 10, "failed")}
        [old] = store.traces.started_in(T0 - 10**9, T0 + 10**9)
        assert old.query == "old question?" and old.pool is not None and old.pool[0].chars is None
        assert store.windows.series()[0]["signal"] == "Traces"
        store.traces.ingest(rag_trace(trace="b" * 32, start=5.0))
        refresh_windows(store)
        assert store.counts()["traces"] == 2
        assert {r.trace_id for r in store.traces.started_in(T0 - 10**9, T0 + 60 * 10**9)} == {
            "a" * 32,
            "b" * 32,
        }


def test_no_file_of_the_monitor_exceeds_500_lines():
    long = {
        str(p.relative_to(MONITOR)): n
        for p in MONITOR.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
    }
    assert long == {}, long
