"""The endpoint probe against a hostile server (issue 45, item 4; old probe t16): the probe
ran outside the request deadline and without a byte cap -- a trickled head kept `cofe
judge --timeout 5` running past 100 s, an endless body took it to 3.2 GB -- and a 302 from
the endpoint turned the chat POST into a GET whose reply was taken as the answer."""

from __future__ import annotations

import json
import socket
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from cofe.llm import Endpoint, EndpointError, LLMClient

Handler = Callable[[socket.socket, bytes], None]
SERVER_SECONDS = 20.0  # every hostile answer stops by itself


def _read_request(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            need = int(line.split(b":")[1]) - len(body)
            while need > 0:
                chunk = sock.recv(need)
                if not chunk:
                    break
                need -= len(chunk)
    return head


@contextmanager
def hostile(handler: Handler) -> Iterator[str]:
    """A loopback server answering each request with ``handler``; its base URL."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve_one(sock: socket.socket) -> None:
        with sock:
            try:
                while not stop.is_set():
                    head = _read_request(sock)
                    if not head:
                        return
                    handler(sock, head)
            except OSError:
                return

    def serve() -> None:
        while not stop.is_set():
            try:
                sock, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=serve_one, args=(sock,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        listener.close()
        thread.join(5)


def _until(seconds: float) -> Callable[[], bool]:
    ends = time.monotonic() + seconds
    return lambda: time.monotonic() < ends


def trickled_head(sock: socket.socket, head: bytes) -> None:
    going = _until(SERVER_SECONDS)
    for byte in b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"y" * 10_000:
        if not going():
            return
        sock.sendall(bytes([byte]))
        time.sleep(0.2)


def endless_body(status: bytes) -> Handler:
    def handler(sock: socket.socket, head: bytes) -> None:
        sock.sendall(
            b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"%x\r\n%s\r\n" % (65536, b"[" * 65536)
        going = _until(SERVER_SECONDS)
        while going():
            sock.sendall(chunk)

    return handler


def _json(sock: socket.socket, status: bytes, body: object, extra: bytes = b"") -> None:
    data = json.dumps(body).encode()
    sock.sendall(
        b"HTTP/1.1 "
        + status
        + b"\r\nContent-Type: application/json\r\n"
        + extra
        + b"Content-Length: %d\r\n\r\n" % len(data)
        + data
    )


COMPLETION = {
    "id": "x",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Paris."}}
    ],
}


def redirecting(sock: socket.socket, head: bytes) -> None:
    line = head.split(b"\r\n")[0]
    if line.startswith(b"GET /v1/models"):
        _json(sock, b"200 OK", {"object": "list", "data": [{"id": "m", "object": "model"}]})
    elif line.startswith(b"POST"):
        _json(sock, b"302 Found", {}, b"Location: /v1/elsewhere\r\n")
    else:  # the GET a followed redirect makes: a reply that is no answer to the question
        _json(sock, b"200 OK", COMPLETION)


def _probe_fails_in(
    url: str, timeout: float, within: float, memory: bool = False
) -> tuple[str, float, int]:
    endpoint = Endpoint.from_env(base_url=url, model="m", api_key="k")
    if memory:  # tracemalloc slows imports tenfold: only where memory is the point
        tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(EndpointError) as raised:
            endpoint.probe(timeout=timeout)
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1] if memory else 0
    finally:
        tracemalloc.stop()
    assert elapsed < within, elapsed
    message = str(raised.value)
    assert url in message and "\n" not in message
    return message, elapsed, peak


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    """openai loads its types on a first request (seconds on a busy machine, before the
    probe's clock can bound anything): one probe of a good server first."""
    with hostile(redirecting) as url:
        Endpoint.from_env(base_url=url, model="m", api_key="k").probe(timeout=30)


def test_a_trickled_head_is_cut_at_the_probe_s_timeout() -> None:
    with hostile(trickled_head) as url:
        _probe_fails_in(url, timeout=2.0, within=3.0)


@pytest.mark.parametrize("status", [b"200 OK", b"500 Internal Server Error", b"404 Not Found"])
def test_an_endless_body_is_cut_by_bytes_and_time(status: bytes) -> None:
    with hostile(endless_body(status)) as url:
        _, _, peak = _probe_fails_in(url, timeout=5.0, within=8.0, memory=True)
    assert peak < 64 * 1024 * 1024, peak  # 3.2 GB before


def test_a_redirect_from_the_endpoint_is_an_error_not_the_reply() -> None:
    """Old probe t16: a 302 turned the POST into a GET and its reply was taken."""
    with hostile(redirecting) as url:
        endpoint = Endpoint.from_env(
            base_url=url, model="m", api_key="k", timeout=5.0, max_retries=0
        )
        endpoint.probe(timeout=5.0)  # the model list is fine
        with pytest.raises(Exception) as raised:
            LLMClient(endpoint).complete([{"role": "user", "content": "Where?"}])
        assert "302" in str(raised.value)
