"""The collector under hostile load, on loopback: memory with large bodies, latency with
slow connections.

    python benchmarks/monitor_hostile.py            # both parts
    python benchmarks/monitor_hostile.py --json

(a) **large bodies**: a real ``cofe monitor collect`` process (SQLite store); 4 clients at
once POST uncompressed OTLP protobuf bodies of just under 64 MB (the largest it takes:
spans of 300 kB attributes), twice each: 8 distinct bodies (8 batches to store), then
one body sent 8 times (stored once, then known). Reported: the collector's peak resident
memory (``VmHWM``) and the answers (a 503 carries Retry-After: the exporter sends the
batch again).

(b) **slow connections**: the same collector; 50 connections each trickle a request a
byte every 2 s (never finishing it) while 8 senders POST batches of 512 spans (3 traces
of 6 spans each, repeated) over kept-alive connections, each waiting for its answer.
Reported: the senders' acknowledgement latency (p50, p95) and how many slow connections
the collector closed by its request deadline.

(c) **one long trace** (``--parts long``, in process, SQLite): one trace fed 1,000 child
spans a batch, 40 batches. Reported: the seconds of every fifth batch (the write
transaction: before the trace bound every batch re-read and re-assembled the whole trace,
so each cost more than the last) and how many spans the store refused past
``MAX_TRACE_SPANS``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cofe.monitor import Span
from cofe.testing import free_port, otlp_request, start_collector, trickle

MB = 1024 * 1024
T0 = (time.time_ns() // 3600_000_000_000 - 1) * 3600_000_000_000


def _spans(first: int, traces: int, attribute_chars: int = 100) -> list[Span]:
    out = []
    for t in range(first, first + traces):
        trace = f"{t + 1:032x}"
        start = T0 + t * 1_000_000
        out.append(
            Span(
                trace,
                f"{1:016x}",
                None,
                "query",
                start,
                start + 10**8,
                "ok",
                "",
                {
                    "openinference.span.kind": "CHAIN",
                    "input.value": f"question {t}?",
                    "output.value": "x" * attribute_chars,
                },
            )
        )
        out.append(
            Span(
                trace,
                f"{2:016x}",
                f"{1:016x}",
                "retrieve",
                start,
                start + 10**7,
                "ok",
                "",
                {
                    "openinference.span.kind": "RETRIEVER",
                    "retrieval.documents.0.document.content": f"chunk {t}",
                },
            )
        )
        out.append(
            Span(
                trace,
                f"{3:016x}",
                f"{1:016x}",
                "llm",
                start,
                start + 10**7,
                "ok",
                "",
                {"openinference.span.kind": "LLM", "output.value": "an answer"},
            )
        )
    return out


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _post(port: int, body: bytes, conn: http.client.HTTPConnection | None = None) -> int:
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request(
            "POST", "/v1/traces", body=body, headers={"Content-Type": "application/x-protobuf"}
        )
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        if own:
            conn.close()


def large_bodies(workdir: Path, distinct: bool = True) -> dict:
    """4 clients at once, each POSTing two bodies of just under 64 MB. ``distinct``: every
    body holds spans of its own (8 new batches to store); otherwise one body, sent 8 times
    (what an exporter's retries of one batch look like: stored once, then known)."""
    bodies = [otlp_request(_spans(0, 210, attribute_chars=300_000)).SerializeToString()]
    assert len(bodies[0]) < 64 * MB, len(bodies[0])
    port = free_port()
    process = start_collector(str(workdir / f"large-{distinct}.db"), port)
    try:
        statuses: list[int] = []

        def send(client: int) -> None:
            for i in range(2):
                if distinct:  # made here, one at a time: the client holds one body
                    body = otlp_request(
                        _spans((2 * client + i) * 1000, 210, attribute_chars=300_000)
                    ).SerializeToString()
                else:
                    body = bodies[0]
                statuses.append(_post(port, body))
                del body

        threads = [threading.Thread(target=send, args=(c,)) for c in range(4)]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return {
            "part": "large bodies",
            "bodies": "distinct" if distinct else "one, sent 8 times",
            "body_mb": round(len(bodies[0]) / MB, 1),
            "clients": 4,
            "statuses": {str(s): statuses.count(s) for s in sorted(set(statuses))},
            "seconds": round(time.monotonic() - started, 1),
            "peak_rss_mb": round(_peak_rss_mb(process.pid), 1),
        }
    finally:
        process.terminate()
        process.wait(30)


def slow_connections(workdir: Path, senders: int = 8, slow: int = 50, batches: int = 20) -> dict:
    port = free_port()
    process = start_collector(str(workdir / "slow.db"), port)
    stop = threading.Event()
    closed = [0]

    latencies: list[float] = []

    def send(sender: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for b in range(batches):
            body = otlp_request(_spans((sender * batches + b) * 171, 171)).SerializeToString()
            started = time.perf_counter()
            assert _post(port, body, conn) == 200
            latencies.append(time.perf_counter() - started)
        conn.close()

    slow_threads = [
        threading.Thread(target=trickle, args=(port, stop, closed), daemon=True)
        for _ in range(slow)
    ]
    try:
        for thread in slow_threads:
            thread.start()
        time.sleep(1.0)
        threads = [threading.Thread(target=send, args=(i,)) for i in range(senders)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        time.sleep(32)  # past the collector's 30 s request deadline
        latencies.sort()
        return {
            "part": "slow connections",
            "senders": senders,
            "slow": slow,
            "batches": len(latencies),
            "ack_p50_ms": round(1000 * statistics.median(latencies)),
            "ack_p95_ms": round(1000 * latencies[int(0.95 * (len(latencies) - 1))]),
            "slow_closed_by_deadline": closed[0],
        }
    finally:
        stop.set()
        process.terminate()
        process.wait(30)


def long_trace(workdir: Path, batches: int = 40, per_batch: int = 1000) -> dict:
    from dataclasses import replace

    from cofe.monitor import MonitorStore

    root = _spans(0, 1)[0]
    trace = root.trace_id
    seconds, refused = {}, 0
    with MonitorStore(workdir / "long.db", window_seconds=3600) as store:
        store.ingest([root])
        next_id = 10**6
        for b in range(1, batches + 1):
            batch = [
                replace(root, span_id=f"{i:016x}", parent_id=root.span_id, attributes={})
                for i in range(next_id, next_id + per_batch)
            ]
            next_id += per_batch
            started = time.perf_counter()
            report = store.ingest(batch)
            if b % 5 == 0:
                seconds[f"{b * per_batch // 1000}k"] = round(time.perf_counter() - started, 3)
            refused += getattr(report, "refused", 0)  # 0 before the bound existed
    return {"part": "one long trace", "trace": trace, "batch_s_at": seconds, "refused": refused}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="large,slow")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as folder:
        if "large" in args.parts:
            results.append(large_bodies(Path(folder), distinct=True))
            results.append(large_bodies(Path(folder), distinct=False))
        if "slow" in args.parts:
            results.append(slow_connections(Path(folder)))
        if "long" in args.parts:
            results.append(long_trace(Path(folder)))
    for result in results:
        print(
            json.dumps(result) if args.json else ", ".join(f"{k}: {v}" for k, v in result.items())
        )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
