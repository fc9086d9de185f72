"""One total deadline over a whole HTTP exchange: connect, request, status line, headers, body.

httpx's timeouts bound each socket operation, never the exchange: a server that sends its
status line and headers a byte a second, or ``100 Continue`` after ``100 Continue``, keeps
every read inside its timeout and the call open for ever. ``LLMClient`` reads the body
itself (and checks its deadline per chunk), but the head is read inside httpcore. So the
endpoint's HTTP client gets a network backend whose streams bound every read, write and
connect by the time left before the calling thread's deadline (``until``), and fail with
httpcore's own timeout once it has passed: httpx and openai turn that into the timeout
error they always raise, and ``LLMClient`` names it the deadline.

The deadline is per thread (the ``openai`` client is shared by every thread, and a sync
request runs in the thread that makes it); outside ``until`` nothing is bounded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

_local = threading.local()


@contextmanager
def until(deadline_at: float) -> Iterator[None]:
    """Bound this thread's HTTP exchanges by ``deadline_at`` (``time.monotonic()`` seconds)."""
    before = getattr(_local, "at", None)
    _local.at = deadline_at
    try:
        yield
    finally:
        _local.at = before


def _bounded(timeout: float | None, error: type[Exception]) -> float | None:
    at: float | None = getattr(_local, "at", None)  # set by ``until``
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise error("the call's total deadline passed")
    return left if timeout is None else min(timeout, left)


@lru_cache(maxsize=1)
def _backend_class() -> Any:
    """The wrapping backend, built on first use: httpcore comes with openai (the pipeline
    extra), and cofe's core imports neither."""
    import httpcore

    class _Stream(httpcore.NetworkStream):
        def __init__(self, stream: httpcore.NetworkStream) -> None:
            self._stream = stream

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return self._stream.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._stream.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

        def close(self) -> None:
            self._stream.close()

        def start_tls(
            self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
        ) -> httpcore.NetworkStream:
            return _Stream(
                self._stream.start_tls(
                    ssl_context, server_hostname, _bounded(timeout, httpcore.ConnectTimeout)
                )
            )

        def get_extra_info(self, info: str) -> Any:
            return self._stream.get_extra_info(info)

    class _Backend(httpcore.NetworkBackend):
        def __init__(self, backend: httpcore.NetworkBackend) -> None:
            self._backend = backend

        def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore.NetworkStream:
            return _Stream(
                self._backend.connect_tcp(
                    host,
                    port,
                    _bounded(timeout, httpcore.ConnectTimeout),
                    local_address,
                    socket_options,
                )
            )

        def connect_unix_socket(
            self,
            path: str,
            timeout: float | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore.NetworkStream:
            return _Stream(
                self._backend.connect_unix_socket(
                    path, _bounded(timeout, httpcore.ConnectTimeout), socket_options
                )
            )

        def sleep(self, seconds: float) -> None:
            self._backend.sleep(seconds)

    return _Backend


def with_deadlines(http_client: Any) -> Any:
    """``http_client`` (an ``httpx.Client``) with every transport's connections bounded by
    the calling thread's deadline: its default transport and the proxies it mounted.

    httpx offers no public way to hand its transport a network backend, so the pools'
    backends are wrapped in place; the tests of the deadline (a trickled head, endless
    ``100 Continue``) fail if a new httpx moves them."""
    transports = [
        getattr(http_client, "_transport", None),
        *getattr(http_client, "_mounts", {}).values(),
    ]
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is not None and not isinstance(backend, _backend_class()):
            pool._network_backend = _backend_class()(backend)  # type: ignore[union-attr]
    return http_client
