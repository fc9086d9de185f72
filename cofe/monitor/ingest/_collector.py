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
this machine. Everything that can refuse a request is checked before its body is read
(and the connection is closed rather than the body read); bodies are read within a byte
budget (a body waits for room in a worker thread; 503 with Retry-After when none comes),
at most ``max_spans`` spans are decoded per request, and a request must arrive whole
within its deadline. The web layer is a Starlette app served by uvicorn (``_asgi``: why,
and the deadline and connection cap it adds); decoding and the store's writes run in
worker threads, never on the event loop.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import zlib
from dataclasses import asdict, dataclass, field
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from cofe.monitor.analysis._window_rows import refresh_windows
from cofe.monitor.ingest._bodies import _ByteBudget, _read_body
from cofe.monitor.ingest._spans import (
    SpanFormatError,
    TooManySpans,
    parse_protobuf_salvaging,
    protobuf_spans,
    spans_from_json,
)
from cofe.monitor.store import MonitorStore
from cofe.monitor.web._asgi import AsgiServer, Guard
from cofe.monitor.web._http import (
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_REQUEST_SECONDS,
    check_binding,
    is_loopback,
    token_ok,
)

# what the collector says as it runs: the CLI shows it on stderr ("cofe monitor collect: ...");
# each record carries its ``event`` and numbers as fields, for a JSON formatter or a filter
log = logging.getLogger("cofe.monitor.collector")

__all__ = ["Collector", "check_binding", "is_loopback", "token_ok"]

TRACES_PATH = "/v1/traces"
DEFAULT_PORT = 4318  # the OTLP/HTTP port exporters use by default
MAX_BODY = 64 * 1024 * 1024
MAX_SPANS = 50_000  # spans in one request (an SDK's batch is 512 by default)
PARALLEL_BODIES = 2  # bodies inflated and decoded at once (each may take ~10x its size)
RETRY_AFTER_SECONDS = 1  # a busy collector's 503 asks the exporter to wait this long


@dataclass
class CollectorStats:
    batches: int = 0
    spans: int = 0
    new_spans: int = 0
    traces: int = 0
    problem_traces: int = 0
    refused_spans: int = 0  # past a trace's bound (MAX_TRACE_SPANS)
    rejected: int = 0  # bodies refused (400/413/415)
    busy: int = 0  # bodies not read or decoded for want of memory (503, Retry-After)
    failed: int = 0  # batches the store could not write (503)
    last_error: str | None = None
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        return (
            f"{self.spans:,} spans in {self.batches:,} batches ({self.new_spans:,} new), "
            f"{self.traces:,} trace updates ({self.problem_traces:,} with problems), "
            f"{self.rejected:,} bodies refused, {self.refused_spans:,} spans past a trace's "
            f"bound, {self.busy:,} deferred (busy), "
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


def _partial(rejected: int, message: str, as_json: bool) -> bytes:
    """An ExportTraceServiceResponse whose partial_success (field 1) holds rejected_spans
    (field 1) and error_message (field 2): accepted, but not every span."""
    if as_json:
        reply = {"partialSuccess": {"rejectedSpans": str(rejected), "errorMessage": message}}
        return json.dumps(reply).encode()
    text = message.encode()
    inner = b"\x08" + _varint(rejected) + b"\x12" + _varint(len(text)) + text
    return b"\x0a" + _varint(len(inner)) + inner


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
        self._stats_lock = threading.Lock()  # worker threads count concurrently
        self._bodies = threading.BoundedSemaphore(PARALLEL_BODIES)
        self._budget = _ByteBudget(max_body)  # the largest body, or many small ones
        # threads waiting for room in the budget: their own pool, one per connection at
        # most, so that waiting never takes the threads the store's writes need
        self._waiters: anyio.CapacityLimiter | None = None
        self.max_connections = max_connections
        self.refresh_seconds, self.quiet = refresh_seconds, quiet
        # the window traffic is still landing in is recomputed at most this often (its cost
        # grows with its traces and it is stale again at once); closed windows every round
        self.open_window_seconds = open_window_seconds
        self._stop = threading.Event()
        self.host = host
        self.server = AsgiServer(
            self._app(),
            (host, port),
            request_seconds=request_seconds,
            max_connections=max_connections,
        )
        self.port = self.server.server_address[1]

    # --- the app -----------------------------------------------------------------------------

    def _app(self) -> Starlette:
        """Routes behind the guard (methods, Host) and the token check, in that order."""
        return Starlette(
            routes=[
                Route(TRACES_PATH, self._traces, methods=["POST"]),
                Route("/healthz", self._healthz, methods=["GET"]),  # and HEAD
            ],
            middleware=[
                Middleware(
                    Guard,
                    methods=("GET", "HEAD", "POST"),
                    bound_host=self.host,
                    token=self.token,
                    answer=_text,
                    not_allowed=f"POST spans to {TRACES_PATH}; GET /healthz",
                    wrong_host=lambda: "this collector answers only requests naming this machine",
                    refused=self._count_rejected,
                    authorized=lambda h: token_ok(h.get("authorization"), self.token),
                ),
                Middleware(_TokenCheck, collector=self),
            ],
            exception_handlers={HTTPException: self._http_error},
        )

    def _count_rejected(self) -> None:
        with self._stats_lock:
            self.stats.rejected += 1

    async def _http_error(self, request: Request, error: Exception) -> Response:
        """The router's 404 and 405 (their body, if any, is never read)."""
        assert isinstance(error, HTTPException)
        if error.status_code == 405:
            allow = ", ".join(sorted((error.headers or {}).get("Allow", "").split(", ")))
            return _text(405, f"POST spans to {TRACES_PATH}; GET /healthz", {"Allow": allow})
        if request.method == "POST":
            return _text(error.status_code, f"POST spans to {TRACES_PATH}", {})
        return _text(error.status_code, "not found", {})

    async def _healthz(self, request: Request) -> Response:
        stats: dict[str, Any] = dict(self.stats.__dict__)
        if not token_ok(request.headers.get("authorization"), self.token):
            # alive, but what came in (last_error quotes bodies) is for senders only
            stats = {"alive": True}
        return Response(json.dumps(stats, default=str), 200, media_type="application/json")

    async def _traces(self, request: Request) -> Response:
        """One POST: everything that can refuse it is checked before its body is read; the
        blocking work (waiting for room, decoding, the store) runs in worker threads."""
        headers = request.headers
        kind = (headers.get("content-type") or "").split(";")[0].strip().lower()
        reply_type = "application/json" if kind == "application/json" else "application/x-protobuf"
        try:
            length = int(headers.get("content-length") or "-1")
        except ValueError:
            length = -1
        if length < 0:
            return self._refuse(411, reply_type, "a Content-Length is required")
        if length > self.max_body:
            return self._refuse(413, reply_type, f"the body is over {self.max_body:,} bytes")
        if kind not in ("application/x-protobuf", "application/json"):
            return self._refuse(
                415,
                "text/plain",
                f"Content-Type {kind or '(none)'}: send application/x-protobuf or application/json",
            )
        encoding = (headers.get("content-encoding") or "").strip().lower()
        if encoding not in ENCODINGS:  # not read as spans: a 400 would make the sender drop them
            return self._refuse(
                415, reply_type, f"Content-Encoding {encoding}: send gzip, deflate or none"
            )
        if not self._budget.acquire(length, timeout=0):  # room now: no thread needed
            if self._waiters is None:
                self._waiters = anyio.CapacityLimiter(self.max_connections + 1)
            # room is waited for half the request's deadline: a 503 is answered before the
            # deadline would cut the connection
            wait = self.server.request_seconds / 2
            if not await anyio.to_thread.run_sync(
                self._budget.acquire, length, wait, limiter=self._waiters
            ):
                return self._busy()
        held = [length]  # bytes of the budget this request holds (its inflated size, later)
        try:
            body = await _read_body(request, length, self.server.request_seconds)
            if body is None:  # the sender stopped, or its deadline passed: nobody to answer
                return Response(status_code=400, headers={"Connection": "close"})
            # handed over in a box the worker empties: no reference stays here, so the body
            # is freed once parsed (a 64 MB body is not held while its spans are made)
            box = [body]
            del body
            return await run_in_threadpool(self._store_body, box, kind, encoding, held)
        finally:
            self._budget.release(held[0])

    def _busy(self) -> Response:
        """503 with Retry-After: OTLP exporters wait that long, then send the batch again."""
        with self._stats_lock:
            self.stats.busy += 1
        return _text(503, "the collector is busy; retry", {"Retry-After": str(RETRY_AFTER_SECONDS)})

    def _store_body(self, box: list[bytes], kind: str, encoding: str, held: list[int]) -> Response:
        """The body decoded and stored (in a worker thread). What is held at once stays near
        one body: the budget counts an inflated body by its inflated size, and a protobuf
        body is dropped once parsed, before its spans are made (body, message and spans are
        never all in memory)."""
        as_json = kind == "application/json"
        reply_type = "application/json" if as_json else "application/x-protobuf"
        length, body = held[0], box.pop()
        with self._bodies:  # memory: a few bodies inflated and decoded at once
            try:
                if encoding in ("gzip", "deflate"):
                    body = _inflate(body, encoding, self.max_body)
                    if len(body) > held[0]:  # its share of the budget: what it inflated to
                        wanted, held[0] = len(body), 0
                        if not self._budget.exchange(
                            length, wanted, self.server.request_seconds / 2
                        ):
                            return self._busy()
                        held[0] = wanted
                dropped = 0  # spans the protobuf library refused, each alone
                if as_json:
                    spans = spans_from_json(body, self.max_spans)
                else:
                    message, dropped = parse_protobuf_salvaging(body)
                    body = b""  # dropped before the spans are made
                    spans = protobuf_spans(message, self.max_spans)
                    del message
            except TooManySpans as error:
                return self._refuse(413, reply_type, str(error))
            except SpanFormatError as error:
                return self._refuse(400, reply_type, str(error))
            except Exception as error:  # a shape the decoder did not foresee is still not spans:
                # answered (not a dropped connection, which the sender would retry forever)
                return self._refuse(
                    400, reply_type, f"not OTLP spans ({type(error).__name__}: {error})"[:500]
                )
            del body
            try:
                report = self.store.traces.ingest(spans)
            except Exception as error:  # disk full, database gone: the exporter retries on 503
                with self._stats_lock:
                    self.stats.failed += 1
                    self.stats.last_error = f"{type(error).__name__}: {error}"[:500]
                log.error(
                    "could not store a batch (%s); answered 503 so the sender retries",
                    self.stats.last_error,
                    extra={"event": "store_failed", "error": self.stats.last_error},
                )
                return _text(503, "the store could not write the batch; retry", {})
        with self._stats_lock:
            stats = self.stats
            stats.batches += 1
            stats.spans += report.spans
            stats.new_spans += report.new_spans
            stats.traces += report.traces
            stats.problem_traces += report.problems
            stats.refused_spans += report.refused + dropped
        if report.refused or dropped:  # stored all but these: OTLP's partial success says why
            why = [report.refusal()] if report.refused else []
            if dropped:
                why.append(
                    f"{dropped} span(s) not readable as OTLP protobuf (a string that is not "
                    "UTF-8, or attributes nested too deeply)"
                )
            return Response(
                _partial(report.refused + dropped, "; ".join(why), as_json),
                200,
                media_type=reply_type,
            )
        # an empty ExportTraceServiceResponse
        return Response(b"{}" if as_json else b"", 200, media_type=reply_type)

    def _refuse(self, status: int, reply_type: str, message: str) -> Response:
        with self._stats_lock:
            self.stats.rejected += 1
            self.stats.last_error = message[:500]
        if reply_type == "application/json":
            body = json.dumps({"code": 3, "message": message}).encode()
        elif reply_type == "text/plain":
            return _text(status, message, {})
        else:
            body = _status_message(3, message)  # INVALID_ARGUMENT
        return Response(body, status, media_type=reply_type)

    # --- running -----------------------------------------------------------------------------

    def _housekeeping(self) -> None:
        last_prune = float("-inf")  # the first round prunes (not only once uptime passes 1 h)
        while not self._stop.wait(self.refresh_seconds):
            try:
                refresh_windows(self.store, open_every_s=self.open_window_seconds)
                if time.monotonic() - last_prune > 3600:
                    self.store.prune()
                    last_prune = time.monotonic()
            except Exception as error:  # a busy store: try again next time, say so
                log.warning(
                    "refreshing windows failed (%s)",
                    error,
                    extra={"event": "refresh_failed", "error": str(error)},
                )
            if not self.quiet:
                with self._stats_lock:
                    counts = {k: v for k, v in asdict(self.stats).items() if k != "last_error"}
                log.info("%s", self.stats.line(), extra={"event": "stats", **counts})

    def serve_forever(self) -> None:
        keeper = threading.Thread(target=self._housekeeping, name="cofe-windows", daemon=True)
        keeper.start()
        try:
            self.server.run_forever()
        finally:
            self._stop.set()
            keeper.join(timeout=5)
            self._refresh()

    def _refresh(self) -> None:
        """Recompute the windows that received traces (each in one transaction with its mark,
        so a batch stored meanwhile is never left out: ``Windows.refresh``)."""
        refresh_windows(self.store)

    def start(self) -> threading.Thread:
        self._thread = threading.Thread(
            target=self.serve_forever, name="cofe-collector", daemon=True
        )
        self._thread.start()
        return self._thread

    def shutdown(self) -> None:
        """Stop serving and wait until the last windows are computed (the store stays open)."""
        self.server.stop()
        thread = getattr(self, "_thread", None)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{TRACES_PATH}"


class _TokenCheck:
    """With a token, a POST without it is refused before anything of it is read (a GET of
    /healthz is answered either way: alive, and the stats only to a sender)."""

    def __init__(self, app: ASGIApp, *, collector: Collector) -> None:
        self.app, self.collector = app, collector

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            header = Headers(scope=scope).get("authorization")
            if not token_ok(header, self.collector.token):
                self.collector._count_rejected()
                response = _text(401, "a valid bearer token is required", {})
                return await response(scope, receive, send)
        await self.app(scope, receive, send)


def _text(status: int, message: str, headers: dict[str, str]) -> Response:
    return PlainTextResponse(message + "\n", status, headers)
