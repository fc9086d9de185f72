"""What a hostile sender does to the collector and the dashboard as HTTP servers (issue 25,
defects 3, 4, 5 and 7), on loopback: idle and trickling connections bounded in time and
count, bodies never read before the request is allowed, a gzip body of tiny spans refused
before it is decoded, Host checked without a token."""

from __future__ import annotations

import gzip
import http.client
import itertools
import socket
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from cofe.monitor import Collector, Dashboard, MonitorStore
from tests.monitor.test_collector import TOKEN, post, protobuf, running, traces_batch


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MonitorStore]:
    with MonitorStore(tmp_path / "monitor.db", window_seconds=60) as opened:
        yield opened


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server closed ``sock`` within ``within`` seconds (recv sees the end)."""
    sock.settimeout(within)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except TimeoutError:
        return False
    except OSError:  # reset: closed too
        return True


def _cut_while_trickling(
    sock: socket.socket, data: Iterable[int], pause: float, seconds: float = 4.0
) -> bool:
    """Send ``data`` a byte at a time, waiting ``pause`` s for the server after each, for at
    most ``seconds``: whether the server closed the connection meanwhile."""
    started = time.monotonic()
    for byte in data:
        if time.monotonic() - started >= seconds:
            return False
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return True
        if _closed_by_server(sock, pause):
            return True
    return False


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def _get(
    port: int, path: str = "/", host: str | None = None, timeout: float = 10
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Host": host} if host else {})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


# --- defect 4: connections bounded in time and count ---------------------------------------


def test_a_trickling_sender_is_cut_at_the_request_deadline(store):
    """The collector's timeout was per read: a byte every 20 s held a connection for ever."""
    with running(store, request_seconds=1.0) as collector:
        sock = _connect(collector.port)
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
            b"application/x-protobuf\r\nContent-Length: 1000\r\n\r\n"
        )
        started = time.monotonic()
        # a byte at a time, each well within a per-read timeout
        closed = _cut_while_trickling(sock, itertools.repeat(ord("x")), pause=0.3)
        assert closed and time.monotonic() - started < 3
        assert collector.stats.batches == 0 and store.counts()["spans"] == 0


def test_idle_connections_are_closed_and_bounded_in_count_so_users_get_through(tmp_path):
    """The dashboard had no socket timeout: 255 idle connections locked users out."""
    location = tmp_path / "monitor.db"
    MonitorStore(location, window_seconds=60).close()
    dashboard = Dashboard(str(location), port=0, request_seconds=1.0, max_connections=8)
    dashboard.start()
    idle = [_connect(dashboard.port) for _ in range(40)]
    try:
        started = time.monotonic()
        assert _get(dashboard.port)[0] == 200  # served once the idle ones' deadline passed
        assert time.monotonic() - started < 8
        assert all(_closed_by_server(sock, 6) for sock in idle[:8])
    finally:
        for sock in idle:
            sock.close()
        dashboard.shutdown()


def test_a_keep_alive_connection_serves_requests_within_its_deadline(store):
    with running(store, request_seconds=2.0) as collector:
        conn = http.client.HTTPConnection("127.0.0.1", collector.port, timeout=10)
        for first in (0, 3, 6):
            assert post(collector.url, protobuf(traces_batch(first)), conn=conn)[0] == 200
        conn.close()


# --- defect 5: nothing read before the request is allowed; bodies bounded --------------------


@pytest.mark.parametrize("path", ["/v1/traces", "/other"])
def test_with_a_token_a_request_without_it_is_answered_before_its_body(store, path):
    """With a token set, a POST to any path but /v1/traces had its whole body (up to 64 MB)
    read before any check."""
    with running(store, token=TOKEN) as collector:
        sock = _connect(collector.port)
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
            f"application/x-protobuf\r\nContent-Length: {60 * 2**20}\r\n\r\n".encode()
        )
        sock.settimeout(3)
        reply = sock.recv(4096)
        sock.close()
    assert reply.startswith(b"HTTP/1.1 401")


def test_an_allowed_request_to_another_path_is_answered_before_its_body(store):
    with running(store, token=TOKEN) as collector:
        sock = _connect(collector.port)
        sock.sendall(
            f"POST /other HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}"
            f"\r\nContent-Length: {60 * 2**20}\r\n\r\n".encode()
        )
        sock.settimeout(3)
        reply = sock.recv(4096)
        sock.close()
    assert reply.startswith(b"HTTP/1.1 404")


def test_a_small_gzip_body_of_too_many_tiny_spans_is_refused_before_decoding(store):
    """A 1.35 MB gzip body of tiny spans peaked at ~510 MB: spans are counted first."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest.FromString(protobuf(traces_batch(0, 1)))
    scope = request.resource_spans[0].scope_spans[0]
    tiny = scope.spans[0]
    del scope.spans[:]
    scope.spans.extend([tiny] * 60_000)
    body = gzip.compress(request.SerializeToString())
    assert len(body) < 2_000_000
    with running(store) as collector:
        status, _, reply = post(collector.url, body, headers={"Content-Encoding": "gzip"})
    assert status == 413 and b"60,000 spans" in reply
    assert store.counts()["spans"] == 0


# --- defect 7: Host checked by the collector too -------------------------------------------


def test_the_collector_refuses_requests_naming_another_host_without_a_token(store):
    """A DNS-rebinding page could write spans into, and read stats from, a loopback
    collector without a token."""
    with running(store) as collector:
        evil = {"Host": f"rebind.example:{collector.port}"}
        assert post(collector.url, protobuf(traces_batch(0)), headers=evil)[0] == 403
        assert _get(collector.port, "/healthz", host=evil["Host"])[0] == 403
        assert store.counts()["spans"] == 0
        assert post(collector.url, protobuf(traces_batch(0)))[0] == 200  # 127.0.0.1:port
        assert (
            post(
                collector.url,
                protobuf(traces_batch(0)),
                headers={"Host": f"localhost:{collector.port}"},
            )[0]
            == 200
        )
        assert _get(collector.port, "/healthz")[0] == 200


def test_with_a_token_the_host_is_not_checked(store):
    with running(store, token=TOKEN) as collector:
        headers = {"Host": "collector.internal:4318", "Authorization": f"Bearer {TOKEN}"}
        assert post(collector.url, protobuf(traces_batch(0)), headers=headers)[0] == 200


# --- defect 3: a window past the store's integers --------------------------------------------


def test_the_dashboard_answers_400_to_a_window_past_2100(tmp_path):
    """``/window?start=9223372036854775000`` was a 500 (an OverflowError)."""
    location = tmp_path / "monitor.db"
    MonitorStore(location, window_seconds=60).close()
    dashboard = Dashboard(str(location), port=0)
    dashboard.start()
    try:
        for path in (
            "/window?start=9223372036854775000",
            "/?until=9223372036854775000",
            "/window?start=1&end=9223372036854775807",
        ):
            status, body = _get(dashboard.port, path)
            assert status == 400 and b"2100" in body, (path, status, body)
    finally:
        dashboard.shutdown()


def test_the_collector_answers_head_and_405_naming_what_it_allows(store):
    with running(store) as collector:
        conn = http.client.HTTPConnection("127.0.0.1", collector.port, timeout=10)
        conn.request("HEAD", "/healthz")
        response = conn.getresponse()
        assert response.status == 200 and response.read() == b""
        conn.request("DELETE", "/v1/traces")
        response = conn.getresponse()
        assert response.status == 405 and response.getheader("Allow") == "GET, HEAD, POST"
        conn.close()


def test_bodies_are_read_within_a_byte_budget():
    """Defect 5: what is read at once is bounded (a large body waits for room; small ones
    pass while there is room)."""
    import threading as _threading

    from cofe.monitor.ingest._collector import _ByteBudget

    budget = _ByteBudget(100)
    assert budget.acquire(60, timeout=1)
    assert budget.acquire(30, timeout=1)  # a small one fits beside it
    assert not budget.acquire(60, timeout=0.2)  # no room: waits, then gives up (503)
    _threading.Timer(0.2, budget.release, args=(60,)).start()
    assert budget.acquire(60, timeout=5)  # room again
    budget.release(60)
    budget.release(30)
    assert budget.held == 0


# --- the web layer (uvicorn) bounds what it does not bound itself ----------------------------


@pytest.mark.parametrize("server", ["collector", "dashboard"])
def test_headers_trickled_a_byte_at_a_time_are_cut_at_the_deadline(store, tmp_path, server):
    """uvicorn's own keep-alive timer starts only after an answer and every byte received
    cancels it: a request head sent a byte at a time held a connection for ever."""
    if server == "collector":
        serving = Collector(store, port=0, request_seconds=1.0, quiet=True)
    else:
        serving = Dashboard(str(tmp_path / "monitor.db"), port=0, request_seconds=1.0)
    serving.start()
    try:
        sock = _connect(serving.port)
        started = time.monotonic()
        head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"y" * 100
        closed = _cut_while_trickling(sock, head, pause=0.2)
        assert closed and time.monotonic() - started < 3
        sock.close()
        assert _get(serving.port, "/healthz" if server == "collector" else "/")[0] == 200
    finally:
        serving.shutdown()


def test_a_request_head_over_64_kb_is_refused_before_more_is_read(store):
    with running(store) as collector:
        sock = _connect(collector.port)
        sock.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"y" * 70_000)
        sock.settimeout(5)
        reply = sock.recv(4096)
        sock.close()
    assert reply.startswith(b"HTTP/1.1 400") and store.counts()["spans"] == 0


def test_a_known_path_with_another_method_is_405_naming_its_method(store):
    with running(store) as collector:
        conn = http.client.HTTPConnection("127.0.0.1", collector.port, timeout=10)
        conn.request("GET", "/v1/traces")
        response = conn.getresponse()
        assert response.status == 405 and response.getheader("Allow") == "POST"
        response.read()
        conn.request("POST", "/healthz", body=b"x" * 10, headers={"Content-Type": "x/y"})
        response = conn.getresponse()
        assert response.status == 405 and response.getheader("Allow") == "GET, HEAD"
        assert response.getheader("Connection") == "close"  # its body is not read
        conn.close()
