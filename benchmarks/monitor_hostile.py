"""The collector under hostile load, on loopback: memory with large bodies, latency with
slow connections.

    python benchmarks/monitor_hostile.py            # parts large, slow and attacks
    python benchmarks/monitor_hostile.py --parts attacks --attack-seconds 15
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

(d) **the second hunt's attacks** (``--parts attacks``, issue 45): for each attack a fresh
``cofe monitor collect`` and ``cofe monitor serve`` on one SQLite store, both requiring a
token, while one legitimate sender (with the token) POSTs a batch of 3 traces (9 spans)
every 0.5 s and one reader GETs the dashboard's overview every second, for
``--attack-seconds``. Attacks: none; 528 idle connections reopened as soon as they are cut
(128 slots held, 400 queued); 50 connections trickling a request a byte every 2 s; three
connections *with the token* declaring 64 MB bodies sent at 1 kB/s, reconnecting when cut;
two senders with the token re-sending gzip bodies of a 9,999-span retriever chain; two
senders with the token re-sending batches whose spans hold strings cut mid-character; 70 kB
request heads in one write; a 60 kB quoted-backslash Cookie header to the dashboard (CVE-
2024-7592); 300 idle connections to the dashboard. Reported: the sender's and the reader's
answers and waits (median, worst), the spans acknowledged with 200 and how many of them the
store lacks afterwards (read from its file), and each server's peak resident memory.

(c) **one long trace** (``--parts long``, in process, SQLite): one trace fed 1,000 child
spans a batch, 40 batches. Reported: the seconds of every fifth batch (the write
transaction: before the trace bound every batch re-read and re-assembled the whole trace,
so each cost more than the last) and how many spans the store refused past
``MAX_TRACE_SPANS``.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import http.client
import json
import os
import selectors
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
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
        store.traces.ingest([root])
        next_id = 10**6
        for b in range(1, batches + 1):
            batch = [
                replace(root, span_id=f"{i:016x}", parent_id=root.span_id, attributes={})
                for i in range(next_id, next_id + per_batch)
            ]
            next_id += per_batch
            started = time.perf_counter()
            report = store.traces.ingest(batch)
            if b % 5 == 0:
                seconds[f"{b * per_batch // 1000}k"] = round(time.perf_counter() - started, 3)
            refused += getattr(report, "refused", 0)  # 0 before the bound existed
    return {"part": "one long trace", "trace": trace, "batch_s_at": seconds, "refused": refused}


# --- (d) the second hunt's attacks (issue 45): a legitimate sender's wait under each -------

TOKEN = "hostile-benchmark-token-0123456789"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


class _Hog:
    """Idle connections to ``port`` (``held`` at once), each reopened as soon as the server
    cuts it, until ``stop`` is set: a client holding every slot (issue 45 item 3, t10)."""

    def __init__(self, port: int, held: int, trickle: bytes = b"") -> None:
        self.port, self.held, self.trickle, self.opened = port, held, trickle, 0

    def _open(self, selector: selectors.BaseSelector) -> None:
        sock = socket.socket()
        sock.setblocking(False)
        try:
            sock.connect(("127.0.0.1", self.port))
        except BlockingIOError:
            pass
        except OSError:
            sock.close()
            return
        if self.trickle:
            with contextlib.suppress(OSError):
                sock.send(self.trickle)
        self.opened += 1
        selector.register(sock, selectors.EVENT_READ)

    def __call__(self, stop: threading.Event) -> None:
        selector = selectors.DefaultSelector()
        try:
            for _ in range(self.held):
                self._open(selector)
            while not stop.is_set():
                for key, _ in selector.select(0.05):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    try:
                        data = sock.recv(4096)
                    except OSError:
                        data = b""
                    if not data:
                        selector.unregister(sock)
                        sock.close()
                        self._open(selector)
        finally:
            for key in list(selector.get_map().values()):
                key.fileobj.close()  # type: ignore[union-attr]
            selector.close()


def _repeat(send: Callable[[], None], stop: threading.Event) -> None:
    while not stop.is_set():
        with contextlib.suppress(OSError, http.client.HTTPException):
            send()


def _slow_body(port: int) -> Callable[[threading.Event], None]:
    """Declares a 64 MB body and sends 1 kB a second, reconnecting when cut (item 6)."""

    def attack(stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                    sock.sendall(
                        b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: "
                        + f"Bearer {TOKEN}".encode()
                        + b"\r\nContent-Type: application/x-protobuf\r\n"
                        b"Content-Length: 67108864\r\n\r\n"
                    )
                    while not stop.wait(1.0):
                        sock.sendall(b"x" * 1000)
            except OSError:
                continue

    return attack


def _raw(port: int, data: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        sock.recv(4096)


def _chain_body(trace: int, n: int = 9_999) -> bytes:
    """A gzip protobuf body: a root and a parent chain of ``n`` retriever spans listing a
    document each (what the second hunt sent, item 5)."""
    trace_id = f"{trace:032x}"
    start = T0 + trace * 1_000_000
    spans = [
        Span(
            trace_id,
            f"{1:016x}",
            None,
            "query",
            start,
            start + 10**8,
            "ok",
            "",
            {"openinference.span.kind": "CHAIN", "input.value": f"chain {trace}?"},
        )
    ]
    for i in range(2, n + 2):
        spans.append(
            Span(
                trace_id,
                f"{i:016x}",
                f"{i - 1:016x}",
                "retrieve",
                start + i,
                start + 10**7,
                "ok",
                "",
                {
                    "openinference.span.kind": "RETRIEVER",
                    "retrieval.documents.0.document.content": f"doc {i}",
                },
            )
        )
    return gzip.compress(otlp_request(spans).SerializeToString())


def _poison_body(first: int) -> bytes:
    """Three traces whose every span's output is cut mid-character (invalid UTF-8), beside
    three good traces (item 8): the protobuf library refuses the whole message."""
    spans = _spans(first, 6)
    for s in spans[:9]:
        if "output.value" in s.attributes:
            s.attributes["output.value"] = "POISON!!"
    return otlp_request(spans).SerializeToString().replace(b"POISON!!", b"POISON\xe2\x82")


def _cookie_attack(port: int) -> Callable[[], None]:
    hostile = 'a="' + "\\" * 30_000 + '"'  # 60 kB of backslashes in quotes (item 1)

    def send() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            conn.request("GET", "/", headers={"Cookie": hostile})
            conn.getresponse().read()
        finally:
            conn.close()

    return send


def _start_dashboard(store: str, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-m", "cofe", "monitor", "serve", "--store", store, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "COFE_MONITOR_TOKEN": TOKEN},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, http.client.HTTPException):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/", headers=BEARER)
            if conn.getresponse().status == 200:
                conn.close()
                return process
        time.sleep(0.2)
    process.kill()
    raise RuntimeError("cofe monitor serve did not start")


def _legit_post(port: int, body: bytes) -> tuple[int, float]:
    started = time.monotonic()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request(
            "POST",
            "/v1/traces",
            body=body,
            headers={"Content-Type": "application/x-protobuf", **BEARER},
        )
        response = conn.getresponse()
        response.read()
        conn.close()
        return response.status, time.monotonic() - started
    except (OSError, http.client.HTTPException):
        return 0, time.monotonic() - started


def _legit_get(port: int) -> tuple[int, float]:
    started = time.monotonic()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("GET", "/", headers=BEARER)
        response = conn.getresponse()
        response.read()
        conn.close()
        return response.status, time.monotonic() - started
    except (OSError, http.client.HTTPException):
        return 0, time.monotonic() - started


ATTACKS = (
    "none",
    "idle slots",
    "slowloris",
    "slow 64 MB body",
    "retriever chains",
    "poison spans",
    "70 kB heads",
    "hostile cookie",
    "dashboard slots",
)


def _attack(name: str, port: int, dashboard: int) -> list[Callable[[threading.Event], None]]:
    """The attack's threads (each runs until its event is set)."""
    if name == "idle slots":  # item 3: 128 slots held and 400 more queued, reopened as cut
        return [_Hog(port, 528)]
    if name == "slowloris":  # t27: 50 connections trickling a request a byte every 2 s
        closed = [0]
        return [lambda stop: trickle(port, stop, closed) for _ in range(50)]
    if name == "slow 64 MB body":  # item 6
        return [_slow_body(port) for _ in range(3)]
    if name == "retriever chains":  # item 5: two 9,999-span chains, sent again and again
        bodies = [_chain_body(10**6 + k) for k in range(2)]
        headers = {"Content-Encoding": "gzip", **BEARER}

        def chains(body: bytes) -> Callable[[threading.Event], None]:
            def send() -> None:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                conn.request(
                    "POST",
                    "/v1/traces",
                    body=body,
                    headers={"Content-Type": "application/x-protobuf", **headers},
                )
                conn.getresponse().read()
                conn.close()

            return lambda stop: _repeat(send, stop)

        return [chains(b) for b in bodies]
    if name == "poison spans":  # item 8
        counter = [2 * 10**6]

        def poison() -> None:
            counter[0] += 6
            _legit_post(port, _poison_body(counter[0]))

        return [lambda stop: _repeat(poison, stop) for _ in range(2)]
    if name == "70 kB heads":  # item 13: a head over 64 kB in one write
        head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 70_000 + b"\r\n\r\n"
        return [lambda stop: _repeat(lambda: _raw(port, head), stop) for _ in range(2)]
    if name == "hostile cookie":  # item 1, on the dashboard
        send = _cookie_attack(dashboard)
        return [lambda stop: _repeat(send, stop) for _ in range(4)]
    if name == "dashboard slots":  # t10: 300 silent connections to the dashboard
        return [_Hog(dashboard, 300)]
    return []


def attacks(workdir: Path, seconds: float = 15.0, names: tuple[str, ...] = ATTACKS) -> list[dict]:
    """Each attack against a fresh collector and dashboard (both with a token, so the
    attacker has none), while one legitimate sender POSTs a batch of 3 traces (9 spans)
    every 0.5 s and one reader GETs the overview every second. Reported: the sender's and
    the reader's waits (median and worst), the spans acknowledged (200) and how many of
    those the store lacks afterwards, and each server's peak resident memory (VmHWM)."""
    os.environ["COFE_MONITOR_TOKEN"] = TOKEN  # the collector started below reads it
    rows = []
    for n, name in enumerate(names):
        rows.append(_one_attack(workdir / f"attack-{n}.db", n, name, seconds))
        print(", ".join(f"{k}: {v}" for k, v in rows[-1].items()), file=sys.stderr, flush=True)
    return rows


def _one_attack(store: Path, n: int, name: str, seconds: float) -> dict:
    port, dashboard_port = free_port(), free_port()
    collector = start_collector(str(store), port)
    dashboard = _start_dashboard(str(store), dashboard_port)
    stop = threading.Event()
    threads = [
        threading.Thread(target=fn, args=(stop,), daemon=True)
        for fn in _attack(name, port, dashboard_port)
    ]
    posts: list[tuple[int, float]] = []
    gets: list[tuple[int, float]] = []
    acked_traces: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            gets.append(_legit_get(dashboard_port))
            stop.wait(1.0)

    try:
        for thread in threads:
            thread.start()
        time.sleep(1.0)  # the attack in place before the sender starts
        reading = threading.Thread(target=reader, daemon=True)
        reading.start()
        ends = time.monotonic() + seconds
        batch = 0
        while time.monotonic() < ends:
            first = 3 * batch + n * 100_000
            body = otlp_request(_spans(first, 3)).SerializeToString()
            status, waited = _legit_post(port, body)
            posts.append((status, waited))
            if status == 200:
                acked_traces += [f"{t + 1:032x}" for t in range(first, first + 3)]
            batch += 1
            time.sleep(max(0.0, 0.5 - waited))
        stop.set()
        reading.join(70)
        collector_mb = _peak_rss_mb(collector.pid)
        dashboard_mb = _peak_rss_mb(dashboard.pid)
    finally:
        stop.set()
        for process in (collector, dashboard):
            process.terminate()
            process.wait(60)
    for thread in threads:
        thread.join(10)
    # read directly: the benchmark checks the store's rows, not cofe's reading of them
    with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
        stored = sum(
            db.execute("SELECT count(*) FROM spans WHERE trace_id = ?", (t,)).fetchone()[0]
            for t in acked_traces
        )
    acked = 3 * len(acked_traces)
    post_waits = sorted(w for _, w in posts)
    get_waits = sorted(w for _, w in gets) or [float("nan")]
    return {
        "attack": name,
        "sender POSTs (200)": f"{len(posts)} ({sum(s == 200 for s, _ in posts)})",
        "POST wait p50 / max": f"{post_waits[len(post_waits) // 2]:.2f} / {post_waits[-1]:.2f} s",
        "reader GETs (200)": f"{len(gets)} ({sum(s == 200 for s, _ in gets)})",
        "GET wait p50 / max": f"{get_waits[len(get_waits) // 2]:.2f} / {get_waits[-1]:.2f} s",
        "spans acked": acked,
        "acked lost": acked - stored,
        "peak RSS collector / dashboard": f"{collector_mb:.0f} / {dashboard_mb:.0f} MB",
    }


def _table(rows: list[dict]) -> str:
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(str(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="large,slow,attacks")
    parser.add_argument("--attack-seconds", type=float, default=15.0)
    parser.add_argument(
        "--attacks", default=",".join(ATTACKS), help="which attacks, by name, comma-separated"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as folder:
        if "attacks" in args.parts:
            names = tuple(n.strip() for n in args.attacks.split(","))
            unknown = set(names) - set(ATTACKS)
            if unknown:
                parser.error(f"no attack named {sorted(unknown)}; the attacks: {ATTACKS}")
            rows = attacks(Path(folder), args.attack_seconds, names)
            print(json.dumps(rows) if args.json else _table(rows))
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
