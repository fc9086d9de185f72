"""Batches that hold the write turn or the memory budget (issue 45, items 5 and 6)."""

from __future__ import annotations

import gzip
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cofe.monitor import MonitorStore
from tests.monitor.conftest import span
from tests.monitor.test_collector import otlp_json, post, protobuf, recent, running, traces_batch


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MonitorStore]:
    with MonitorStore(tmp_path / "monitor.db", window_seconds=60) as opened:
        yield opened


def _chain(trace: int, n: int) -> bytes:
    """A gzip OTLP/JSON body: a root and a parent chain of ``n`` retriever spans listing a
    document each (what the second hunt sent: ~170 kB)."""
    spans = [span("1", "CHAIN", trace=f"{trace:032x}", **{"input.value": "q"})]
    for i in range(2, n + 2):
        spans.append(
            span(
                f"{i:x}",
                "RETRIEVER",
                parent=f"{i - 1:x}",
                trace=f"{trace:032x}",
                start=i * 1e-6,
                **{"retrieval.documents.0.document.content": f"doc {i}"},
            )
        )
    return gzip.compress(otlp_json(recent(spans)))


def test_long_retriever_chains_do_not_hold_the_write_turn(store):
    """Item 5: the retriever listing walked every ancestor of every span (N^2/2): two such
    bodies held the write turn ~35 s, and an unrelated 3-span batch waited 34.8 s."""
    bodies = [_chain(100 + k, 9_999) for k in range(2)]
    statuses: list[int] = []
    with running(store) as collector:

        def send(body: bytes) -> None:
            statuses.append(
                post(collector.url, body, "application/json", {"Content-Encoding": "gzip"})[0]
            )

        senders = [threading.Thread(target=send, args=(b,)) for b in bodies]
        for sender in senders:
            sender.start()
        time.sleep(0.5)
        started = time.monotonic()
        assert post(collector.url, protobuf(traces_batch(0)))[0] == 200
        waited = time.monotonic() - started
        for sender in senders:
            sender.join(120)
    assert statuses == [200, 200]
    assert waited < 5.0, waited
    trace = store.traces.get(f"{100:032x}")
    assert trace is not None and trace.pool is not None and len(trace.pool) == 1


def _slow_bodies(port: int, seconds: float, stop: threading.Event) -> int:
    """Connections declaring a 64 MB body and sending 1 kB a second, each reopened when cut,
    for ``seconds``: how many were opened."""
    opened = 0
    ends = time.monotonic() + seconds
    while time.monotonic() < ends and not stop.is_set():
        opened += 1
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(
                b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                b"application/x-protobuf\r\nContent-Length: 67108864\r\n\r\n"
            )
            try:
                while time.monotonic() < ends and not stop.is_set():
                    sock.sendall(b"x" * 1000)
                    sock.settimeout(1.0)
                    try:
                        if sock.recv(4096) == b"":
                            break
                    except TimeoutError:
                        continue
            except OSError:
                continue
    return opened


def test_a_body_trickled_under_a_huge_length_does_not_hold_the_budget(store):
    """Item 6: Content-Length 64 MB at 1 kB/s held the whole body budget until the request
    deadline, and again on reconnecting: 3 of 7 batches got 503 after 15 s."""
    stop = threading.Event()
    with running(store) as collector:
        hog = threading.Thread(target=_slow_bodies, args=(collector.port, 20, stop))
        hog.start()
        time.sleep(1.0)
        waits, statuses = [], []
        try:
            for i in range(7):
                started = time.monotonic()
                statuses.append(post(collector.url, protobuf(traces_batch(10 * i)))[0])
                waits.append(time.monotonic() - started)
                time.sleep(0.5)
        finally:
            stop.set()
            hog.join(30)
    assert statuses == [200] * 7, (statuses, waits)
    assert max(waits) < 5.0, waits


def test_senders_declaring_huge_bodies_in_turn_never_starve_a_small_batch(store):
    """Three connections declaring 64 MB at 1 kB/s, each reconnecting when cut: one held the
    whole budget at a time and the others waited for it beside the small batches, which
    lost the race on most releases -- a 2 kB batch waited 14 s, past an exporter's 10 s
    timeout (benchmarks/monitor_hostile.py). The smallest waiting body now goes first."""
    stop = threading.Event()
    with running(store) as collector:
        hogs = [
            threading.Thread(target=_slow_bodies, args=(collector.port, 25, stop)) for _ in range(3)
        ]
        for hog in hogs:
            hog.start()
        time.sleep(1.0)
        waits, statuses = [], []
        try:
            for i in range(8):
                started = time.monotonic()
                statuses.append(post(collector.url, protobuf(traces_batch(10 * i)))[0])
                waits.append(time.monotonic() - started)
                time.sleep(0.5)
        finally:
            stop.set()
            for hog in hogs:
                hog.join(30)
    assert statuses == [200] * 8, (statuses, waits)
    assert max(waits) < 5.0, waits


def test_the_smallest_body_waiting_goes_first():
    from cofe.monitor.ingest._bodies import _ByteBudget

    budget = _ByteBudget(100)
    assert budget.acquire(100, timeout=1)  # a big body holds every byte
    order: list[str] = []

    def wait_for(name: str, n: int) -> None:
        if budget.acquire(n, timeout=5):
            order.append(name)
            time.sleep(0.2)
            budget.release(n)

    big = threading.Thread(target=wait_for, args=("big", 100))
    big.start()
    time.sleep(0.1)
    small = threading.Thread(target=wait_for, args=("small", 1))
    small.start()
    time.sleep(0.1)
    budget.release(100)
    big.join(10)
    small.join(10)
    assert order == ["small", "big"]
    assert budget.held == 0
