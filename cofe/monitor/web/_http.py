"""What the collector and the dashboard share as HTTP servers, apart from the web layer
itself (``_asgi``: uvicorn serving Starlette, a deadline per request, a cap on
connections): the defaults of those bounds, Host checking, the token, and the heap.

Both run next to production unattended, so a sender must not be able to hold them:

- **a deadline per request**: the request line, the headers and the body must all have
  arrived within ``request_seconds`` of the request's start (or of the connection's
  last answer); an idle keep-alive connection is closed the same way (``_asgi``);
- **a cap on connections**: at most ``max_connections`` open at once; one that has not
  passed the checks is closed to make room for a new one, a client holds at most a
  quarter of them so, and its head must be in within 5 s (``_asgi``);
- **Host checking**: without a token, a request must name this machine (a loopback name or
  the address listened on), so a page elsewhere cannot reach a loopback server through
  DNS rebinding (:func:`host_allowed`, applied by ``_asgi.Guard``).
"""

from __future__ import annotations

import hmac
import ipaddress

from cofe._errors import ConfigurationError

DEFAULT_REQUEST_SECONDS = 30.0
DEFAULT_MAX_CONNECTIONS = 128


def bound_heap() -> None:
    """Keep a long-running server's memory near what its requests hold (glibc only).

    glibc gives each thread that allocates under contention an arena of its own (up to 8
    per core), and memory freed in one is not reused by another: with a thread per
    request (the server before ``_asgi``; worker threads decode bodies now), four 64 MB
    bodies peaked at 1.9 GB. Two arenas, and blocks of 128 kB or more
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
        raise ConfigurationError(
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
    port = ""
    if name.startswith("["):  # [::1]:8765
        if "]" not in name:
            return False
        name, _, port = name[1:].partition("]")
        if port and not port.startswith(":"):
            return False
        port = port[1:] if port else ""
    elif name.count(":") == 1:
        name, _, port = name.partition(":")
        if not port:
            return False
    # a port is digits and nothing else: "localhost:4318@evil.example" names no port
    if port and not (port.isascii() and port.isdigit()):
        return False
    return is_loopback(name) or name == bound_host.lower()
