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
    trace = store.trace(f"{100:032x}")
    assert trace is not None and trace.pool is not None and len(trace.pool) == 1
