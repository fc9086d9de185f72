"""What the collector and the dashboard share as HTTP servers: Host checking, a deadline
per request, and a cap on connections.

Both run next to production unattended, so a sender must not be able to hold them:

- **a deadline per request**: the request line, the headers and the body must all have
  arrived within ``request_seconds`` of the request's start (or of the connection's
  last request). A socket timeout alone bounds each read, not their sum -- a byte every
  20 s would hold a connection for ever -- so a watchdog closes the socket when the
  deadline passes; an idle keep-alive connection is closed the same way;
- **a cap on connections**: past ``max_connections`` open at once, new ones wait in the
  listen queue until one closes (which the deadline guarantees), instead of each taking
  a thread;
- **Host checking**: without a token, a request must name this machine (a loopback name or
  the address listened on), so a page elsewhere cannot reach a loopback server through
  DNS rebinding.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_REQUEST_SECONDS = 30.0
DEFAULT_MAX_CONNECTIONS = 128


def bound_heap() -> None:
    """Keep a long-running server's memory near what its requests hold (glibc only).

    glibc gives each thread that allocates under contention an arena of its own (up to 8
    per core), and memory freed in one is not reused by another: with a thread per
    request, four 64 MB bodies peaked at 1.9 GB. Two arenas, and blocks of 128 kB or more
    (a chunk's text, a body) mapped and unmapped on their own rather than kept in a heap,
    bring that to about 0.4 GB (``benchmarks/monitor_hostile.py``)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(-8, 2)  # M_ARENA_MAX
        libc.mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD, fixed (no dynamic raise)
    except (OSError, AttributeError):
        pass  # another C library: its own defaults


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None) -> None:
    """Refuse to listen beyond this machine without a token."""
    if not is_loopback(host) and not token:
        raise ValueError(
            f"listening on {host} (not loopback) needs a token: set "
            "COFE_MONITOR_TOKEN or pass --token-file"
        )


def token_ok(header: str | None, token: str | None) -> bool:
    """Whether an ``Authorization`` header carries the token (compared in constant time)."""
    if not token:
        return True
    given = (header or "").removeprefix("Bearer ").strip()
    return hmac.compare_digest(given.encode(), token.encode())


def host_allowed(host_header: str | None, bound_host: str) -> bool:
    """Whether a request's ``Host`` names this machine (a loopback name, or the address the
    server listens on). No Host (HTTP/1.0) is allowed: a browser always sends one."""
    if host_header is None:
        return True
    name = host_header.strip().lower()
    if name.startswith("["):  # [::1]:8765
        name = name[1 : name.index("]")] if "]" in name else name
    elif name.count(":") == 1:
        name = name.rsplit(":", 1)[0]
    return is_loopback(name) or name == bound_host.lower()


class BoundedServer(ThreadingHTTPServer):
    """A thread per connection, at most ``max_connections`` at once (see the module)."""

    daemon_threads = True
    block_on_close = False

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        *,
        request_seconds: float = DEFAULT_REQUEST_SECONDS,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.request_seconds = request_seconds
        self._slots = threading.BoundedSemaphore(max_connections)
        self._closing = threading.Event()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        # the accepting loop waits here while every slot is taken: the connection (and those
        # behind it in the listen queue) is served when a slot frees, within the deadline
        while not self._slots.acquire(timeout=0.2):
            if self._closing.is_set():
                self.shutdown_request(request)
                return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def server_close(self) -> None:
        self._closing.set()
        super().server_close()


class DeadlineHandler(BaseHTTPRequestHandler):
    """A request handler whose request must arrive within the server's ``request_seconds``;
    the handler calls :meth:`request_read` once it has read what it needs (the answer may
    take longer: a transaction that commits is not cut short)."""

    protocol_version = "HTTP/1.1"
    server: BoundedServer

    def setup(self) -> None:
        self.timeout = self.server.request_seconds  # type: ignore[misc]  # no read waits longer
        super().setup()

    def handle_one_request(self) -> None:
        watchdog = threading.Timer(self.server.request_seconds, self._cut)
        watchdog.daemon = True
        self._watchdog = watchdog
        watchdog.start()
        try:
            super().handle_one_request()
        finally:
            watchdog.cancel()

    def request_read(self) -> None:
        """The request is read whole: its deadline no longer applies."""
        self._watchdog.cancel()

    def _cut(self) -> None:
        """The deadline passed with the request still arriving: close the connection (the
        blocked read returns, and the handler ends without answering)."""
        self.close_connection = True
        with contextlib.suppress(OSError):  # already closed by the handler meanwhile
            self.connection.shutdown(socket.SHUT_RDWR)
