"""What keeps the collector's memory and its senders' waits bounded: a busy answer the
exporter honours, a gzip body counted by what it inflates to, a batch sent again that
costs no re-assembly, SQLite writers taken in arrival order, and windows computed with no
write transaction held open (``benchmarks/monitor_hostile.py``, ``monitor_ingest.py``)."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cofe.monitor import MonitorStore, refresh_windows
from cofe.monitor.analysis import _window_rows as windows_module
from cofe.monitor.ingest._collector import _ByteBudget
from cofe.monitor.store import _traces
from cofe.monitor.store._engine import StoreError, _Turns
from tests.monitor.test_collector import post, protobuf, running, traces_batch


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MonitorStore]:
    with MonitorStore(tmp_path / "m.db", window_seconds=60) as opened:
        yield opened


def test_a_busy_collector_answers_503_with_retry_after(store):
    with running(store, max_body=100_000) as collector:
        collector._budget.acquire(100_000, timeout=1)  # every byte of the budget is taken
        collector.server.request_seconds = 0.3  # type: ignore[misc]  # wait briefly
        try:
            import http.client

            conn = http.client.HTTPConnection("127.0.0.1", collector.port, timeout=10)
            conn.request(
                "POST",
                "/v1/traces",
                body=b"x" * 500,
                headers={"Content-Type": "application/x-protobuf"},
            )
            answer = conn.getresponse()
            assert answer.status == 503 and answer.getheader("Retry-After") == "1"
            conn.close()
        finally:
            collector._budget.release(100_000)
        assert collector.stats.busy == 1
        assert post(collector.url, protobuf(traces_batch(0, 1)))[0] == 200  # room again


def test_a_gzip_body_holds_the_budget_by_its_inflated_size(store):
    body = protobuf(traces_batch(0, 3))
    packed = gzip.compress(body)
    assert len(packed) < len(body)
    seen = []
    with running(store) as collector:
        budget = collector._budget
        exchange = budget.exchange

        def watched(held: int, wanted: int, timeout: float) -> bool:
            ok = exchange(held, wanted, timeout)
            seen.append((held, wanted, budget.held))
            return ok

        budget.exchange = watched  # type: ignore[method-assign]
        assert post(collector.url, packed, headers={"Content-Encoding": "gzip"})[0] == 200
        deadline = time.monotonic() + 5
        while budget.held and time.monotonic() < deadline:  # given back after the answer
            time.sleep(0.01)
        assert budget.held == 0
    assert seen == [(len(packed), len(body), len(body))]


def test_the_budget_exchange_holds_nothing_while_it_waits():
    budget = _ByteBudget(100)
    assert budget.acquire(10, timeout=1) and budget.acquire(10, timeout=1)  # bodies A and B
    # A gives back its 10 and waits for 100; B's 10 is held, so A gets nothing -- and holds
    # nothing, so B could take the whole budget meanwhile (no two bodies wait on each other)
    assert not budget.exchange(10, 100, 0.2)
    assert budget.held == 10
    threading.Timer(0.2, budget.release, args=(10,)).start()  # B ends
    assert budget.exchange(0, 100, 5)
    budget.release(100)
    assert budget.held == 0


def test_a_batch_sent_again_is_not_assembled_again(store, monkeypatch):
    batch = traces_batch(0, 3)
    calls: list[str] = []
    assemble = _traces.assemble
    monkeypatch.setattr(
        _traces,
        "assemble",
        lambda trace_id, spans: (calls.append(trace_id), assemble(trace_id, spans))[1],
    )
    first = store.traces.ingest(batch)
    assert (first.new_spans, first.traces, len(calls)) == (18, 3, 3)
    again = store.traces.ingest(batch)
    assert (again.new_spans, again.traces, len(calls)) == (0, 3, 3)  # no re-assembly
    store.traces.ingest(traces_batch(0, 3)[:2] + traces_batch(5, 1))  # one new trace only
    assert len(calls) == 4 and store.counts()["spans"] == 24


def test_sqlite_writers_of_one_process_take_turns_in_arrival_order():
    turns, order = _Turns(timeout=5), []

    def writer(n: int) -> None:
        with turns.turn():
            order.append(n)
            time.sleep(0.02)

    with turns.turn():
        threads = []
        for n in range(5):
            threads.append(threading.Thread(target=writer, args=(n,)))
            threads[-1].start()
            time.sleep(0.05)  # each queued behind the one before
    for thread in threads:
        thread.join()
    assert order == [0, 1, 2, 3, 4]
    short = _Turns(timeout=0.1)
    with short.turn(), pytest.raises(StoreError, match="no turn to write"), short.turn():
        pass


def test_a_window_is_computed_with_no_write_transaction_open(store):
    """A batch stored while a window computes does not wait for the computing, and the
    window is marked again (computed anew next time)."""
    store.traces.ingest(traces_batch(0, 1))
    compute, waited = windows_module.window_rows, []

    def slow_window_rows(*args):
        began = time.monotonic()
        store.traces.ingest(traces_batch(1, 1))  # lands in the window while it is computed
        waited.append(time.monotonic() - began)
        return compute(*args)

    windows_module.window_rows = slow_window_rows  # type: ignore[assignment]
    assert refresh_windows(store) == 1
    windows_module.window_rows = compute  # type: ignore[assignment]
    assert waited and waited[0] < 5  # not held up (it would deadlock on a held lock)
    assert store.windows.pending() == 1  # the window changed while computed: marked again
    assert refresh_windows(store) == 1 and store.windows.pending() == 0
    assert [r["value"] for r in store.windows.series(stage="all", signal="Traces")] == [2.0]


def test_the_open_window_is_recomputed_at_most_so_often_and_never_left_out(store):
    """Traffic keeps landing in the open window; recomputing it every round is what slowed
    every sender's acks. The collector recomputes it at most every ``open_every_s``; it stays
    marked meanwhile, so any plain refresh (a reader, the collector's last) computes it."""
    store.traces.ingest(traces_batch(0, 1))
    still_open = 0  # "now" before the window ends: it is still open
    assert refresh_windows(store, open_every_s=60, now_ns=still_open) == 1  # never computed: now
    store.traces.ingest(traces_batch(1, 1))
    assert refresh_windows(store, open_every_s=60, now_ns=still_open) == 0  # computed a moment ago
    assert store.windows.pending() == 1  # still marked: not lost
    closed = 2**62  # once the window has ended it is computed every round
    assert refresh_windows(store, open_every_s=60, now_ns=closed) == 1
    store.traces.ingest(traces_batch(2, 1))
    assert refresh_windows(store) == 1 and store.windows.pending() == 0  # a plain refresh: always
    assert [r["value"] for r in store.windows.series(stage="all", signal="Traces")] == [3.0]
