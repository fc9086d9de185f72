"""``cofe monitor collect`` killed with SIGKILL while batches are in flight, then restarted
on the same store: every acknowledged batch is there, each batch is all there or not at
all, and once the senders resend what was not acknowledged (and some of what was), the
store holds every span once and the series count every trace once."""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cofe.monitor import MonitorStore, refresh_windows
from cofe.testing import start_collector
from tests.monitor.conftest import _free_port
from tests.monitor.test_collector import protobuf, traces_batch

pytestmark = pytest.mark.slow

BATCHES, TRACES_PER_BATCH, SPANS_PER_TRACE = 160, 4, 6
KILL_AFTER = 40  # acknowledgements before the SIGKILL
SENDERS = 4


def _start(db: Path, port: int) -> subprocess.Popen:
    return start_collector(str(db), port, "--refresh", "0.2", timeout=30)


class Senders:
    """Threads posting batches over kept-alive connections; what each sending came to."""

    def __init__(self, port: int, bodies: list[bytes]) -> None:
        self.port, self.bodies = port, bodies
        self.lock = threading.Lock()
        self.acked: list[int] = []  # batch numbers answered 200, in order
        self.failed: dict[int, str] = {}  # batch -> the error, for those not answered
        self.started: dict[int, float] = {}  # batch -> when its request began
        self.on_ack = lambda n: None

    def send(self, numbers: list[int]) -> None:
        queue = list(numbers)

        def work() -> None:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            while True:
                with self.lock:
                    if not queue:
                        break
                    n = queue.pop(0)
                    self.started[n] = time.monotonic()
                try:
                    conn.request(
                        "POST",
                        "/v1/traces",
                        body=self.bodies[n],
                        headers={"Content-Type": "application/x-protobuf"},
                    )
                    response = conn.getresponse()
                    response.read()
                    status = response.status
                except (OSError, http.client.HTTPException) as error:
                    with self.lock:
                        self.failed[n] = type(error).__name__
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                    continue
                with self.lock:
                    if status != 200:
                        self.failed[n] = f"HTTP {status}"
                        continue
                    self.acked.append(n)
                    acked = len(self.acked)
                self.on_ack(acked)
            conn.close()

        threads = [threading.Thread(target=work) for _ in range(SENDERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(thread.is_alive() for thread in threads)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen]]:
    """Collectors started by the test; any still running at its end is killed."""
    started: list[subprocess.Popen] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


def test_a_receiver_killed_mid_batch_keeps_what_it_acknowledged_and_counts_nothing_twice(
    tmp_path, processes
):
    db, port = tmp_path / "monitor.db", _free_port()
    batches = [traces_batch(n * TRACES_PER_BATCH, TRACES_PER_BATCH) for n in range(BATCHES)]
    keys = [{(s.trace_id, s.span_id) for s in spans} for spans in batches]
    assert all(len(k) == TRACES_PER_BATCH * SPANS_PER_TRACE for k in keys)
    bodies = [protobuf(spans) for spans in batches]

    # --- first life: killed with SIGKILL after KILL_AFTER acknowledgements ----------------
    first = _start(db, port)
    processes.append(first)
    senders = Senders(port, bodies)
    killed_at: list[float] = []

    def kill_after(acked: int) -> None:
        if acked == KILL_AFTER:
            killed_at.append(time.monotonic())
            os.kill(first.pid, signal.SIGKILL)

    senders.on_ack = kill_after
    senders.send(list(range(BATCHES)))
    assert first.wait(timeout=30) == -signal.SIGKILL
    first.stderr.close()
    acked_before = set(senders.acked)
    # it died mid-run: not everything was acknowledged, and requests were under way when
    # it died (begun before the kill, never answered)
    in_flight = {n for n in senders.failed if senders.started[n] < killed_at[0]}
    assert KILL_AFTER <= len(acked_before) < BATCHES
    assert in_flight, senders.failed
    assert set(senders.failed) | acked_before == set(range(BATCHES))
    assert not [e for e in senders.failed.values() if e.startswith("HTTP")], senders.failed

    # --- straight after the kill: nothing acknowledged lost, no batch stored in part -------
    with MonitorStore(db) as store:
        after_kill = set(store.db.execute("SELECT trace_id, span_id FROM spans"))
    for n in range(BATCHES):
        present = len(keys[n] & after_kill)
        assert present in (0, len(keys[n])), f"batch {n} is stored in part ({present} spans)"
        if n in acked_before:
            assert present == len(keys[n]), f"batch {n} was acknowledged but is not stored"
    stored_unacked = [n for n in range(BATCHES) if n not in acked_before and keys[n] <= after_kill]

    # --- second life on the same store: resend what was not acknowledged, and some of what was
    second = _start(db, port)
    processes.append(second)
    try:
        resend = sorted(set(range(BATCHES)) - acked_before) + sorted(acked_before)[::3]
        again = Senders(port, bodies)
        again.send(resend)
        assert again.failed == {} and sorted(again.acked) == sorted(resend)
    finally:
        second.send_signal(signal.SIGTERM)
        _, err = second.communicate(timeout=30)
    assert second.returncode == 0, err
    # its own count: what it newly stored is exactly what the first life had not
    stats = re.findall(r"([\d,]+) spans in ([\d,]+) batches \(([\d,]+) new\)", err)[-1]
    spans_sent, batches_sent, new = (int(x.replace(",", "")) for x in stats)
    total = BATCHES * TRACES_PER_BATCH * SPANS_PER_TRACE
    assert batches_sent == len(resend) and spans_sent == len(resend) * len(keys[0])
    assert new == total - len(after_kill), (new, total, len(after_kill))

    with MonitorStore(db) as store:
        counts = store.counts()
        assert counts["spans"] == total, (counts, len(stored_unacked))
        assert counts["traces"] == BATCHES * TRACES_PER_BATCH
        assert counts["traces_with_problems"] == 0
        records = store.traces.started_in(0, 2**62)
        assert len(records) == BATCHES * TRACES_PER_BATCH
        assert all(r.spans == SPANS_PER_TRACE and r.is_query for r in records)
        assert {r.query for r in records} == {f"question {t}?" for t in range(len(records))}
        # the windows the collector computed (at its last refresh) count every trace once,
        # and there is nothing left for a later refresh to change
        traces_series = store.windows.series(stage="all", signal="Traces")
        assert sum(r["value"] for r in traces_series) == BATCHES * TRACES_PER_BATCH
        assert refresh_windows(store) == 0
        assert store.windows.series(stage="all", signal="Traces") == traces_series
        assert len(traces_series) >= 2  # the traces span several windows
