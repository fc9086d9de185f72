"""``cofe monitor collect``: an OTLP/HTTP trace receiver that writes to the store.

``POST /v1/traces`` with an ``ExportTraceServiceRequest`` in protobuf
(``application/x-protobuf``) or OTLP/JSON (``application/json``), optionally gzip or
deflate compressed -- what every OpenTelemetry OTLP/HTTP exporter sends. A batch is
acknowledged (200) only after its transaction committed, so a receiver killed at
any moment has either stored a batch or not acknowledged it (the exporter sends it
again; spans are keyed, so nothing is counted twice). A body that is not spans gets
400 (the exporter does not retry it), an unknown Content-Type or Content-Encoding 415;
a store that cannot write gets 503 (the exporter retries). One bad value never costs a
batch (``_clean``): what no store can keep is repaired and counted on its trace.

Loopback by default; another address needs a token (``Authorization: Bearer ...``),
which is compared in constant time and never logged; without one, the Host must name
this machine. Everything that can refuse a request is checked before its body is read;
bodies are read within a byte budget, at most ``max_spans`` spans are decoded per
request, and a request must arrive whole within its deadline (``_http``).
"""

from __future__ import annotations

import json
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cofe.monitor._http import (
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_REQUEST_SECONDS,
    BoundedServer,
    DeadlineHandler,
    check_binding,
    host_allowed,
    is_loopback,
    token_ok,
)
from cofe.monitor._spans import (
    SpanFormatError,
    TooManySpans,
    parse_protobuf,
    protobuf_spans,
    spans_from_json,
)
from cofe.monitor.store import MonitorStore

__all__ = ["Collector", "check_binding", "is_loopback", "token_ok"]

TRACES_PATH = "/v1/traces"
DEFAULT_PORT = 4318  # the OTLP/HTTP port exporters use by default
MAX_BODY = 64 * 1024 * 1024
MAX_SPANS = 50_000  # spans in one request (an SDK's batch is 512 by default)
PARALLEL_BODIES = 2  # bodies inflated and decoded at once (each may take ~10x its size)
RETRY_AFTER_SECONDS = 1  # a busy collector's 503 asks the exporter to wait this long


class _ByteBudget:
    """Bytes of request bodies held at once: a body is read only when its Content-Length
    fits (small batches pass while a few large ones are read; memory stays bounded)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.held = limit, 0
        self._changed = threading.Condition()

    def acquire(self, n: int, timeout: float) -> bool:
        with self._changed:
            if not self._changed.wait_for(lambda: self.held + n <= self.limit, timeout):
                return False
            self.held += n
            return True

    def exchange(self, held: int, wanted: int, timeout: float) -> bool:
        """Give back ``held`` bytes and wait for ``wanted`` instead (a compressed body's
        share swapped for its inflated size). Nothing is held while waiting -- two bodies
        each waiting for the other's share cannot stall -- and nothing when it fails."""
        with self._changed:
            self.held -= held
            self._changed.notify_all()
            if not self._changed.wait_for(lambda: self.held + wanted <= self.limit, timeout):
                return False
            self.held += wanted
            return True

    def release(self, n: int) -> None:
        with self._changed:
            self.held -= n
            self._changed.notify_all()


@dataclass
class CollectorStats:
    batches: int = 0
    spans: int = 0
    new_spans: int = 0
    traces: int = 0
    problem_traces: int = 0
    rejected: int = 0  # bodies refused (400/413/415)
    busy: int = 0  # bodies not read or decoded for want of memory (503, Retry-After)
    failed: int = 0  # batches the store could not write (503)
    last_error: str | None = None
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        return (
            f"{self.spans:,} spans in {self.batches:,} batches ({self.new_spans:,} new), "
            f"{self.traces:,} trace updates ({self.problem_traces:,} with problems), "
            f"{self.rejected:,} bodies refused, {self.busy:,} deferred (busy), "
            f"{self.failed:,} store failures"
        )


ENCODINGS = ("gzip", "deflate", "identity", "")


def _inflate(body: bytes, encoding: str, limit: int) -> bytes:
    """A gzip or deflate body, inflated to at most ``limit`` bytes. Deflate is zlib's format
    (what the OpenTelemetry exporters' ``deflate`` compression sends), or raw deflate; gzip
    may be several members one after another (RFC 1952), each inflated in turn."""
    if encoding == "deflate":
        try:
            return _inflate_one(body, zlib.MAX_WBITS, encoding, limit, limit)[0]
        except zlib.error:
            pass  # not zlib's wrapper: raw deflate
    out, rest = b"", body
    while True:
        try:
            wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else -zlib.MAX_WBITS
            part, rest = _inflate_one(rest, wbits, encoding, limit - len(out), limit)
        except zlib.error as error:
            raise SpanFormatError(f"not a {encoding} body: {error}") from None
        out += part
        if encoding != "gzip" or not rest:
            return out


def _inflate_one(
    body: bytes, wbits: int, encoding: str, room: int, limit: int
) -> tuple[bytes, bytes]:
    """One compressed stream of at most ``room`` bytes: (its bytes, what follows it)."""
    inflater = zlib.decompressobj(wbits)
    out = inflater.decompress(body, room + 1)
    if len(out) > room or inflater.unconsumed_tail:
        raise SpanFormatError(f"the body inflates past {limit:,} bytes")
    if not inflater.eof:  # zlib says nothing when the stream stops short
        raise SpanFormatError(f"the {encoding} body is truncated")
    return out, inflater.unused_data


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _status_message(code: int, message: str) -> bytes:
    """A ``google.rpc.Status`` in protobuf (field 1: code, field 2: message): the body OTLP
    asks for with an error, without a dependency for a two-field message."""
    text = message.encode()
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


class Collector:
    """The receiver; ``serve_forever`` blocks, ``start`` runs it in a thread (tests)."""

    def __init__(
        self,
        store: MonitorStore,
        *,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        token: str | None = None,
        max_body: int = MAX_BODY,
        max_spans: int = MAX_SPANS,
        request_seconds: float = DEFAULT_REQUEST_SECONDS,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        refresh_seconds: float = 10.0,
        open_window_seconds: float = 60.0,
        quiet: bool = False,
    ) -> None:
        check_binding(host, token)
        self.store, self.token, self.max_body, self.max_spans = store, token, max_body, max_spans
        self.stats = CollectorStats()
        self._stats_lock = threading.Lock()  # handler threads count concurrently
        self._bodies = threading.BoundedSemaphore(PARALLEL_BODIES)
        self._budget = _ByteBudget(max_body)  # the largest body, or many small ones
        self.refresh_seconds, self.quiet = refresh_seconds, quiet
        # the window traffic is still landing in is recomputed at most this often (its cost
        # grows with its traces and it is stale again at once); closed windows every round
        self.open_window_seconds = open_window_seconds
        self._stop = threading.Event()
        collector = self

        class Handler(DeadlineHandler):
            def log_message(self, format: str, *args: Any) -> None:  # the token is in headers:
                pass  # nothing about a request is logged; the stats line says what came in

            def do_POST(self) -> None:
                collector._handle(self)

            def do_GET(self) -> None:
                self.request_read()
                if not collector._host_ok(self):
                    return collector._wrong_host(self)
                if self.path == "/healthz":
                    stats = dict(collector.stats.__dict__)
                    if not token_ok(self.headers.get("Authorization"), collector.token):
                        # alive, but what came in (last_error quotes bodies) is for senders only
                        stats = {"alive": True}
                    self._send(200, "application/json", json.dumps(stats, default=str).encode())
                else:
                    self._send(404, "text/plain", b"not found\n")

            def do_HEAD(self) -> None:
                self._head = True  # GET's status and headers, no body
                self.do_GET()

            def __getattr__(self, name: str) -> Any:
                if name.startswith("do_"):  # any other method: 405 naming those allowed
                    return self._not_allowed
                raise AttributeError(name)

            def _not_allowed(self) -> None:
                self.request_read()
                self.close_connection = True  # its body, if any, is not read
                self._send(
                    405,
                    "text/plain",
                    b"POST spans to /v1/traces; GET /healthz\n",
                    {"Allow": "GET, HEAD, POST"},
                )

            def _send(
                self,
                status: int,
                content_type: str,
                body: bytes,
                extra: dict[str, str] | None = None,
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for key, value in (extra or {}).items():
                    self.send_header(key, value)
                if self.close_connection:
                    self.send_header("Connection", "close")
                self.end_headers()
                if not getattr(self, "_head", False):
                    self.wfile.write(body)
                self._head = False

        self.handler = Handler
        self.server = BoundedServer(
            (host, port), Handler, request_seconds=request_seconds, max_connections=max_connections
        )
        self.port = self.server.server_address[1]
        self.host = host

    # --- one request -----------------------------------------------------------------------

    def _host_ok(self, request: DeadlineHandler) -> bool:
        """With a token, the token guards; without one, only requests naming this machine
        (a page elsewhere must not post spans or read stats through DNS rebinding)."""
        return self.token is not None or host_allowed(request.headers.get("Host"), self.host)

    def _wrong_host(self, request: DeadlineHandler) -> None:
        request.close_connection = True  # nothing of its body is read
        with self._stats_lock:
            self.stats.rejected += 1
        request._send(  # type: ignore[attr-defined]
            403,
            "text/plain",
            b"this collector answers only requests naming this machine\n",
        )

    def _handle(self, request: DeadlineHandler) -> None:
        """One POST: everything that can refuse it is checked before its body is read."""
        send: Callable[..., None] = request._send  # type: ignore[attr-defined]
        if not self._host_ok(request):
            request.request_read()
            return self._wrong_host(request)
        if not token_ok(request.headers.get("Authorization"), self.token):
            request.request_read()
            request.close_connection = True  # a caller without the token gets nothing read
            with self._stats_lock:
                self.stats.rejected += 1
            return send(401, "text/plain", b"a valid bearer token is required\n")
        if request.path.split("?")[0] != TRACES_PATH:
            request.request_read()
            request.close_connection = True  # its body is not read
            return send(404, "text/plain", f"POST spans to {TRACES_PATH}\n".encode())
        kind = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        as_json = kind == "application/json"
        reply_type = "application/json" if as_json else "application/x-protobuf"
        try:
            length = int(request.headers.get("Content-Length") or "-1")
        except ValueError:
            length = -1
        if length < 0:
            request.request_read()
            request.close_connection = True
            return self._refuse(send, 411, reply_type, "a Content-Length is required")
        if length > self.max_body:
            request.request_read()
            request.close_connection = True
            return self._refuse(send, 413, reply_type, f"the body is over {self.max_body:,} bytes")
        # room is waited for half the request's deadline: a 503 is answered before the
        # deadline would cut the connection
        if not self._budget.acquire(length, timeout=self.server.request_seconds / 2):
            request.request_read()
            request.close_connection = True  # its body is not read
            return self._busy(send)
        held = [length]  # bytes of the budget this request holds (its inflated size, later)
        try:
            self._receive(request, send, kind, reply_type, held)
        finally:
            self._budget.release(held[0])

    def _busy(self, send: Callable[..., None]) -> None:
        """503 with Retry-After: OTLP exporters wait that long, then send the batch again."""
        with self._stats_lock:
            self.stats.busy += 1
        send(
            503,
            "text/plain",
            b"the collector is busy; retry\n",
            {"Retry-After": str(RETRY_AFTER_SECONDS)},
        )

    def _receive(
        self,
        request: DeadlineHandler,
        send: Callable[..., None],
        kind: str,
        reply_type: str,
        held: list[int],
    ) -> None:
        """The body (its bytes within the collector's budget), decoded and stored. What is
        held at once stays near one body: the budget counts an inflated body by its
        inflated size, and a protobuf body is dropped once parsed, before its spans are
        made (body, message and spans are never all in memory)."""
        as_json = kind == "application/json"
        length = held[0]
        body = request.rfile.read(length)
        request.request_read()
        if len(body) < length:  # the sender stopped, or its deadline passed: no answer
            request.close_connection = True
            return None
        if kind not in ("application/x-protobuf", "application/json"):
            return self._refuse(
                send,
                415,
                "text/plain",
                f"Content-Type {kind or '(none)'}: send application/x-protobuf or application/json",
            )
        encoding = (request.headers.get("Content-Encoding") or "").strip().lower()
        if encoding not in ENCODINGS:  # not read as spans: a 400 would make the sender drop them
            return self._refuse(
                send, 415, reply_type, f"Content-Encoding {encoding}: send gzip, deflate or none"
            )
        with self._bodies:  # memory: a few bodies inflated and decoded at once
            try:
                if encoding in ("gzip", "deflate"):
                    body = _inflate(body, encoding, self.max_body)
                    if len(body) > held[0]:  # its share of the budget: what it inflated to
                        wanted, held[0] = len(body), 0
                        if not self._budget.exchange(
                            length, wanted, self.server.request_seconds / 2
                        ):
                            return self._busy(send)
                        held[0] = wanted
                if as_json:
                    spans = spans_from_json(body, self.max_spans)
                else:
                    message = parse_protobuf(body)
                    body = b""  # dropped before the spans are made
                    spans = protobuf_spans(message, self.max_spans)
                    del message
            except TooManySpans as error:
                return self._refuse(send, 413, reply_type, str(error))
            except SpanFormatError as error:
                return self._refuse(send, 400, reply_type, str(error))
            except Exception as error:  # a shape the decoder did not foresee is still not spans:
                # answered (not a dropped connection, which the sender would retry forever)
                return self._refuse(
                    send, 400, reply_type, f"not OTLP spans ({type(error).__name__}: {error})"[:500]
                )
            del body
            try:
                report = self.store.ingest(spans)
            except Exception as error:  # disk full, database gone: the exporter retries on 503
                with self._stats_lock:
                    self.stats.failed += 1
                    self.stats.last_error = f"{type(error).__name__}: {error}"[:500]
                print(
                    f"cofe monitor collect: could not store a batch ({self.stats.last_error}); "
                    "answered 503 so the sender retries",
                    file=sys.stderr,
                )
                return send(503, "text/plain", b"the store could not write the batch; retry\n")
        with self._stats_lock:
            stats = self.stats
            stats.batches += 1
            stats.spans += report.spans
            stats.new_spans += report.new_spans
            stats.traces += report.traces
            stats.problem_traces += report.problems
        send(200, reply_type, b"{}" if as_json else b"")  # an empty ExportTraceServiceResponse

    def _refuse(
        self, send: Callable[..., None], status: int, reply_type: str, message: str
    ) -> None:
        with self._stats_lock:
            self.stats.rejected += 1
            self.stats.last_error = message[:500]
        if reply_type == "application/json":
            body = json.dumps({"code": 3, "message": message}).encode()
        else:
            body = _status_message(3, message)  # INVALID_ARGUMENT
        send(status, reply_type, body)

    # --- running -----------------------------------------------------------------------------

    def _housekeeping(self) -> None:
        last_prune = float("-inf")  # the first round prunes (not only once uptime passes 1 h)
        while not self._stop.wait(self.refresh_seconds):
            try:
                self.store.refresh(open_every_s=self.open_window_seconds)
                if time.monotonic() - last_prune > 3600:
                    self.store.prune()
                    last_prune = time.monotonic()
            except Exception as error:  # a busy store: try again next time, say so
                print(f"cofe monitor collect: refreshing windows failed ({error})", file=sys.stderr)
            if not self.quiet:
                print(f"cofe monitor collect: {self.stats.line()}", file=sys.stderr, flush=True)

    def serve_forever(self) -> None:
        keeper = threading.Thread(target=self._housekeeping, name="cofe-windows", daemon=True)
        keeper.start()
        try:
            self.server.serve_forever(poll_interval=0.2)
        finally:
            self._stop.set()
            keeper.join(timeout=5)
            self.server.server_close()
            self._refresh()

    def _refresh(self) -> None:
        """Recompute the windows that received traces (each in one transaction with its mark,
        so a batch stored meanwhile is never left out: ``MonitorStore.refresh``)."""
        self.store.refresh()

    def start(self) -> threading.Thread:
        self._thread = threading.Thread(
            target=self.serve_forever, name="cofe-collector", daemon=True
        )
        self._thread.start()
        return self._thread

    def shutdown(self) -> None:
        """Stop serving and wait until the last windows are computed (the store stays open)."""
        self.server.shutdown()
        thread = getattr(self, "_thread", None)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{TRACES_PATH}"
