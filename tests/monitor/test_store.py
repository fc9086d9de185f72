"""The store, on SQLite and on a real PostgreSQL server: the same queries, the same answers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cofe.monitor import STORE_SCHEMA_VERSION, MonitorStore, StoreError, refresh_windows
from cofe.monitor.analysis import _window_rows as windows_module
from tests.monitor.conftest import T0, TRACE, rag_trace


def _signal(store: MonitorStore, stage: str, name: str) -> dict:
    rows = store.windows.series(stage=stage, signal=name)
    assert len(rows) == 1, rows
    return rows[0]


def test_a_batch_sent_twice_is_stored_and_counted_once(store: MonitorStore):
    first = store.traces.ingest(rag_trace())
    again = store.traces.ingest(rag_trace())
    assert (first.new_spans, again.new_spans) == (6, 0)
    counts = store.counts()
    assert counts["spans"] == 6 and counts["traces"] == 1
    refresh_windows(store)
    assert _signal(store, "all", "Traces")["value"] == 1.0


def test_chunks_are_stored_once_and_restored_for_later_batches(store: MonitorStore):
    store.traces.ingest(rag_trace(trace="a" * 32))
    store.traces.ingest(rag_trace(trace="b" * 32))
    assert store.counts()["chunks"] == 3  # two traces, the same three chunk texts
    # a trace whose root arrives in a later batch is re-assembled from the stored spans,
    # chunk texts included
    spans = rag_trace(trace="c" * 32)
    store.traces.ingest(spans[1:])
    partial = store.traces.get("c" * 32)
    assert any("no root span" in p for p in partial.problems)
    store.traces.ingest(spans[:1])
    whole = store.traces.get("c" * 32)
    assert whole.problems == []
    assert whole.query == "When was the tower finished?"
    assert [d.text for d in whole.context] == [
        "The tower was finished in 1889.",
        "Paris is a city.",
    ]


def test_windows_hold_the_label_free_signals(store: MonitorStore):
    for i in range(4):
        pool = ["The tower was finished in 1889.", "Paris is a city.", "x y z"]
        # in the last trace the reranker keeps only chunks from the bottom of the pool
        context = pool[:2] if i < 3 else pool[2:]
        store.traces.ingest(
            rag_trace(
                trace=f"{i + 1:032x}",
                pool=pool,
                context=context,
                start=i,
                answer=(
                    "I cannot answer that.",
                    "In 1889. The context does not give the architect.",
                    "In 1889.",
                    "In 1889.",
                )[i],
            )
        )
    assert refresh_windows(store) == 1
    assert refresh_windows(store) == 0  # nothing new: nothing recomputed
    assert _signal(store, "all", "Traces")["value"] == 4
    assert _signal(store, "retrieval", "PoolSize")["value"] == 3
    assert _signal(store, "retrieval", "TopScore")["value"] == pytest.approx(1.0)
    top1 = _signal(store, "reranking", "Top1Dropped")
    assert (top1["value"], top1["n"]) == (0.25, 4)
    assert _signal(store, "reranking", "PromotedShare")["value"] == pytest.approx(0.25)
    assert _signal(store, "generation", "LatencyP95")["value"] == pytest.approx(0.5)
    refusals = _signal(store, "generation", "RefusalRate")
    assert (refusals["value"], refusals["n"]) == (0.25, 4)
    declines = _signal(store, "generation", "DeclineRate")  # the partial one counts here
    assert (declines["value"], declines["n"]) == (0.5, 4)
    judged = _signal(store, "generation", "Faithfulness")
    assert judged["value"] is None and "cofe monitor judge" in judged["note"]


def test_a_trace_added_later_refreshes_its_window(store: MonitorStore):
    store.traces.ingest(rag_trace(trace="a" * 32))
    refresh_windows(store)
    store.traces.ingest(rag_trace(trace="b" * 32, start=1))
    assert refresh_windows(store) == 1
    assert _signal(store, "all", "Traces")["value"] == 2


def test_retention_deletes_old_traces_but_keeps_the_series(store_location: str):
    with MonitorStore(store_location, window_seconds=60, retain_seconds=3600) as store:
        store.traces.ingest(rag_trace(trace="a" * 32))
        store.traces.ingest(rag_trace(trace="b" * 32, start=7200))
        refresh_windows(store)
        pruned = store.prune(now_ns=T0 + 7200 * 10**9 + 10)
        assert pruned == {"spans": 6, "traces": 1}
        assert store.traces.get("a" * 32) is None and store.traces.get("b" * 32) is not None
        assert len(store.windows.series(stage="all", signal="Traces")) == 2


def test_settings_are_fixed_at_creation(store_location: str):
    MonitorStore(store_location, window_seconds=60).close()
    with MonitorStore(store_location) as reopened:
        assert reopened.window_seconds == 60
    with pytest.raises(StoreError, match="window is 60 s, not 30 s"):
        MonitorStore(store_location, window_seconds=30)


def test_a_newer_schema_is_refused_and_an_older_one_migrated(store_location: str):
    MonitorStore(store_location).close()
    with MonitorStore(store_location) as store:
        assert store.schema_version == STORE_SCHEMA_VERSION == 4
        store.db.execute("UPDATE cofe_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="schema version 99 was written by a newer cofe"):
        MonitorStore(store_location)
    with MonitorStore.__new__(MonitorStore) as raw:  # back to a version-1 store by hand
        from cofe.monitor.store._engine import Engine

        raw.db = Engine(store_location)
        raw.db.execute("DROP TABLE alerts")
        raw.db.execute("DROP TABLE canary_scores")
        raw.db.execute("DROP TABLE judge_gates")
        raw.db.execute("UPDATE cofe_meta SET value = '1' WHERE key = 'schema_version'")
    with MonitorStore(store_location) as migrated:
        assert migrated.schema_version == 4
        assert migrated.db.execute("SELECT COUNT(*) FROM alerts") == [(0,)]
        assert migrated.db.execute("SELECT COUNT(*) FROM canary_scores") == [(0,)]
        assert migrated.db.execute("SELECT COUNT(*) FROM judge_gates") == [(0,)]
        assert migrated.db.execute("SELECT value FROM cofe_meta WHERE key = 'schema_version'") == [
            ("4",)
        ]


def test_a_database_of_something_else_is_refused(tmp_path: Path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (name TEXT)")
    with pytest.raises(StoreError, match="not a cofe monitoring store"):
        MonitorStore(path)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=r"garbage\.db"):
        MonitorStore(garbage)
    with pytest.raises(StoreError, match="is a folder"):
        MonitorStore(tmp_path)


def test_a_postgres_url_that_does_not_connect_names_it_without_the_password():
    with pytest.raises(StoreError) as raised:
        MonitorStore("postgresql://cofe:secret@127.0.0.1:1/none")
    assert "cannot connect" in str(raised.value) and "secret" not in str(raised.value)


def test_both_engines_give_the_same_series(tmp_path: Path, postgres_url: str):
    rows = []
    for location in (tmp_path / "a.db", postgres_url):
        with MonitorStore(location, window_seconds=60) as store:
            for i in range(5):
                store.traces.ingest(rag_trace(trace=f"{i + 1:032x}", start=i * 30))
            refresh_windows(store)
            rows.append(store.windows.series())
    assert rows[0] == rows[1] and len(rows[0]) > 40


def test_query_lookup_for_canaries(store: MonitorStore):
    store.traces.ingest(rag_trace(trace="a" * 32, query="first?"))
    store.traces.ingest(rag_trace(trace="b" * 32, query="second?"))
    found = store.traces.by_query(["first?", "absent?"], since_ns=0)
    assert list(found) == ["first?"] and found["first?"][0].trace_id == "a" * 32
    assert found["first?"][0].pool[0].text == "The tower was finished in 1889."
    assert TRACE  # the default id is a valid 16-byte id


def test_two_writers_storing_one_trace_at_once_on_postgres_assemble_it_whole(postgres_url: str):
    """Two collectors on one PostgreSQL store receive different spans of a trace at the same
    time: the second waits for the first's commit and assembles the trace from all spans."""
    import threading

    first, second = MonitorStore(postgres_url), MonitorStore(postgres_url)
    spans = rag_trace(trace="c" * 32)
    put, wrote = first.traces._put, threading.Event()

    def put_then_linger(*args, **kwargs):  # the first has written its record, not committed
        put(*args, **kwargs)
        wrote.set()
        threading.Event().wait(0.5)

    first.traces._put = put_then_linger  # type: ignore[method-assign]
    thread = threading.Thread(target=first.traces.ingest, args=(spans[1:],))
    thread.start()
    wrote.wait(5)
    second.traces.ingest(spans[:1])  # the root span, meanwhile
    thread.join()
    record = second.traces.get("c" * 32)
    first.close()
    second.close()
    assert record is not None and record.spans == 6 and record.problems == []


def _refresh_while_storing(refresher: MonitorStore, writer_store: MonitorStore) -> None:
    """``refresh_windows(refresher)`` with a second trace of the window stored while it computes."""
    import threading

    compute, started = windows_module.window_rows, threading.Event()

    def slow_window_rows(*args):
        started.set()
        threading.Event().wait(0.3)  # the other writer stores a batch of this window meanwhile
        return compute(*args)

    windows_module.window_rows = slow_window_rows  # type: ignore[assignment]
    writer = threading.Thread(
        target=lambda: (
            started.wait(5),
            writer_store.traces.ingest(rag_trace(trace="b" * 32, start=1)),
        )
    )
    writer.start()
    refresh_windows(refresher)
    writer.join()
    windows_module.window_rows = compute  # type: ignore[assignment]


def test_a_refresh_never_leaves_out_a_batch_stored_while_it_computes(store: MonitorStore):
    store.traces.ingest(rag_trace(trace="a" * 32))
    _refresh_while_storing(store, store)
    refresh_windows(store)  # the batch marked the window again (or waited for the first refresh)
    assert [r["value"] for r in store.windows.series(stage="all", signal="Traces")] == [2.0]


def test_a_root_arriving_later_moves_the_trace_to_its_window_and_out_of_the_other(store):
    spans = rag_trace()
    late = [
        s.__class__(
            **{
                **{f: getattr(s, f) for f in s.__slots__},
                "start_ns": s.start_ns + 90 * 10**9,
                "end_ns": s.end_ns + 90 * 10**9,
            }
        )
        for s in spans[1:]
    ]  # the stages, 90 s after the root began
    store.traces.ingest(late)
    refresh_windows(store)
    store.traces.ingest(spans[:1])  # the root (exported last) starts in the window before
    refresh_windows(store)
    counts = [r["value"] for r in store.windows.series(stage="all", signal="Traces")]
    assert sum(counts) == 1  # counted once, in the root's window


def test_processes_opening_a_new_store_at_once_all_get_it(store_location: str):
    import concurrent.futures

    def open_one(_):
        with MonitorStore(store_location) as opened:
            return opened.schema_version

    with concurrent.futures.ThreadPoolExecutor(6) as pool:  # a connection each, as processes
        assert list(pool.map(open_one, range(6))) == [STORE_SCHEMA_VERSION] * 6


def test_a_refresher_and_a_collector_on_two_postgres_connections_lose_no_batch(postgres_url):
    import threading

    collector, refresher = MonitorStore(postgres_url, window_seconds=60), MonitorStore(postgres_url)
    collector.traces.ingest(rag_trace(trace="a" * 32))
    _refresh_while_storing(refresher, collector)
    second = MonitorStore(postgres_url)  # and two refreshers at once take a window once
    both = [threading.Thread(target=refresh_windows, args=(s,)) for s in (refresher, second)]
    for t in both:
        t.start()
    for t in both:
        t.join()
    values = [r["value"] for r in refresher.windows.series(stage="all", signal="Traces")]
    for s in (collector, refresher, second):
        s.close()
    assert values == [2.0]


def test_a_trace_rebuilt_from_stored_spans_still_says_its_tracer_dropped_attributes(store):
    spans = rag_trace()
    cut = spans[1].__class__(
        **{**{f: getattr(spans[1], f) for f in spans[1].__slots__}, "dropped_attributes": 76}
    )
    store.traces.ingest([cut, *spans[2:]])
    store.traces.ingest(spans[:1])  # the root later: rebuilt from the stored spans
    record = store.traces.get(TRACE)
    assert any("76 attribute(s)" in p for p in record.problems)


def test_the_store_holds_one_repository_per_entity_over_its_one_engine(store: MonitorStore):
    """No mixins: MonitorStore keeps the engine, schema and settings; what it holds is read
    and written through one repository per entity, each its own module, sharing the engine
    (so one transaction discipline, one reconnect policy)."""
    from cofe.monitor.store import AlertLog, Canaries, Judgements, Traces, Windows

    assert MonitorStore.__bases__ == (object,)
    repositories = {
        "traces": Traces,
        "windows": Windows,
        "judgements": Judgements,
        "canaries": Canaries,
        "alerts": AlertLog,
    }
    for name, kind in repositories.items():
        repository = getattr(store, name)
        assert type(repository) is kind and repository.db is store.db, name
    assert len({kind.__module__ for kind in repositories.values()}) == len(repositories)
    store.traces.ingest(rag_trace(trace="d" * 32))
    assert refresh_windows(store) == 1 and store.windows.pending() == 0
    assert store.traces.get("d" * 32) is not None and store.counts()["traces"] == 1
