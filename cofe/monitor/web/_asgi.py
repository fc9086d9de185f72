"""The web layer the collector and the dashboard share: a Starlette app served by uvicorn,
with the two things uvicorn lacks for a server that hostile senders can reach.

Why this stack: Starlette gives routing (HEAD from GET, 404/405 as exceptions one handler
answers), middleware and responses; uvicorn is the ASGI server Starlette is made with, and
its h11 protocol parses requests with a bound on the request line plus headers
(``h11_max_incomplete_event_size``: past it, 400 before anything is read further). What
neither bounds is *time*, and uvicorn does not *queue* connections:

- **no deadline on receiving a request.** uvicorn (0.54, h11 and httptools alike) arms a
  timer only once a response is sent (``timeout_keep_alive``), and cancels it on every byte
  received: a connection that sends nothing, or its headers or body a byte every few
  seconds, is held for ever (encode/uvicorn#1192, open since 2021; xorbitsai/inference
  #5213 closed the same hole with a protocol subclass). An ASGI middleware cannot help: the
  app is called only once the headers are in. Hypercorn's ``read_timeout`` is per read, so
  a byte within each still holds a connection for ever;
- **no cap that waits.** ``limit_concurrency`` accepts every connection and answers 503
  past the limit: forty idle sockets would lock users out instead of waiting their turn.

So, two small extensions (the rest is uvicorn's):

- :class:`DeadlineProtocol`, uvicorn's h11 protocol with an absolute deadline: a request's
  line, headers and body must all have arrived within ``request_seconds`` of the connection
  opening (or of the previous answer on a kept-alive connection); past it the connection
  is closed (the app sees a disconnect and answers nothing). Once a request is read whole
  the deadline no longer applies: a transaction that commits is not cut short. An answer
  the client stops reading (its buffers full) is cut after ``request_seconds`` stalled;
- :class:`AsgiServer`'s accept loop serves at most ``max_connections`` at once, and a
  connection not yet *trusted* never keeps a newer one out. A connection is trusted once a
  request of it came in whole-headed and passed the app's checks (the token, or without
  one the Host: :class:`Guard` says so through ``scope["state"]``); until then it must
  send its request line and headers within ``head_seconds`` (5 s), and it is the first
  closed to make room: a new connection, when all slots are held, closes the oldest
  untrusted one, and a client (an IP address) holding ``max_per_client`` untrusted
  connections loses its oldest to its next. So one client opening idle sockets as fast
  as they are cut holds at most its share, never a sender's turn, and a trusted sender
  waits for nothing unauthenticated. When every slot is trusted the next connection
  waits in the listen queue until one closes -- which the deadline guarantees.

Public hooks, looked for first (uvicorn 0.54's ``Config`` and its settings and
server-behaviour docs): none does either job. uvicorn's timeouts are ``timeout_keep_alive``
(between requests, reset by every byte received), ``timeout_graceful_shutdown`` and the
websocket pings; the request-start and request-complete timeouts asked for in its issue
#157 were never added. ``limit_concurrency`` answers 503 at once and its docs say it
queues nothing; ``backlog`` only sizes the kernel's accept queue. So both extensions use
uvicorn's insides, each at one seam: the protocol class goes in through ``Config(http=...)``
(typed to take an ``asyncio.Protocol`` class, the one public way in), but the class it
extends, ``uvicorn.protocols.http.h11_impl.H11Protocol``, and the attributes it reads
(``conn``, ``loop``, ``transport``, ``app_state``) are internal; the accept loop replaces
``uvicorn.Server.startup``/``shutdown``, public methods with no promise as extension
points. Hence uvicorn's narrow version range in pyproject.toml, and
tests/monitor/test_asgi_seams.py failing by name when a method overridden here is gone
from uvicorn (an override of a renamed method would silently never run).

The app's own guard (:class:`Guard`, an ASGI middleware): methods not allowed are 405 with
``Allow``; without a token, a request must name this machine (``Host``: no DNS
rebinding); and any answer given before a request's body was read closes the connection
(the rest of the body is never read). Blocking work (the store, decoding) runs in worker
threads, so the event loop never waits on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import socket
from collections.abc import Callable

import h11
import uvicorn
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from cofe.monitor.web._http import host_allowed

HEADER_BYTES = 64 * 1024  # request line + headers (http.server allowed 64 kB a line)
HEAD_SECONDS = 5.0  # an untrusted connection's request line and headers must be in by then
TRUST = "cofe.trust"  # scope["state"][TRUST](): the request passed the app's checks
_READ = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.SWITCHED_PROTOCOL)

# a request line may hold a token (?token=...), a header the bearer token: uvicorn logs
# nothing (no access log; its own warnings, which quote no request, go nowhere either)
logging.getLogger("uvicorn").addHandler(logging.NullHandler())
logging.getLogger("uvicorn").propagate = False


# a subclass of uvicorn's internal h11 protocol (uvicorn.protocols.http.h11_impl.H11Protocol):
# no public hook bounds the time a request takes to arrive (see the module's "Public
# hooks"). Re-read in uvicorn 0.54.0's source, the newest release: the one timer
# H11Protocol arms is timeout_keep_alive_task, set in on_response_complete and cancelled
# by _unset_keepalive_if_required as data arrives, and Config takes no request timeout.
class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on receiving each request (see the module)."""

    bounds: AsgiServer
    _deadline: asyncio.TimerHandle | None = None
    _head: asyncio.TimerHandle | None = None  # the untrusted head's shorter deadline
    _stalled: asyncio.TimerHandle | None = None
    _slot: bool = False  # holds one of the server's connection slots
    trusted: bool = False  # a request of it passed the app's checks (see the module)
    peer: str = ""  # the client's address: its untrusted connections are bounded

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self.app_state[TRUST] = self.trust
        self._arm()
        self._head = self.loop.call_later(self.bounds.head_seconds, self._cut_head)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._head is not None and self.conn.their_state is not h11.IDLE:
            self._head.cancel()  # the head is in: the request deadline goes on
            self._head = None
        self._disarm_when_read()

    def trust(self) -> None:
        """The app's checks passed: this connection is never closed to make room."""
        if not self.trusted:
            self.trusted = True
            self.bounds.trusted(self)

    def _cut_head(self) -> None:
        self._head = None
        if not self.trusted and self.conn.their_state is h11.IDLE:
            self._cut()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start a pipelined request
        if self.trusted and not self.transport.is_closing():
            # idle until its next request, whose checks trust it again: an idle
            # keep-alive connection is the newest untrusted one, closed to make room
            self.trusted = False
            self.bounds._untrusted[self] = None
        if not self.transport.is_closing():
            self._arm()  # the next request must arrive within the deadline of this answer
            self._disarm_when_read()

    def pause_writing(self) -> None:
        """The client stopped reading an answer: it has the deadline to read on, or is cut
        (a slow reader would otherwise hold its connection for ever)."""
        super().pause_writing()
        if self._stalled is None:
            self._stalled = self.loop.call_later(self.bounds.request_seconds, self._abort)

    def resume_writing(self) -> None:
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None
        super().resume_writing()

    def _abort(self) -> None:
        self._stalled = None
        self.transport.abort()  # what is unsent is dropped; the app's send returns

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._head is not None:
            self._head.cancel()
            self._head = None
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None
        try:
            super().connection_lost(exc)
        finally:
            if self._slot:
                self._slot = False
                self.bounds.release(self)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.bounds.request_seconds, self._cut)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _disarm_when_read(self) -> None:
        """The request is in whole (h11 saw its end): its deadline no longer applies."""
        if self.conn.their_state in _READ:
            self._disarm()

    def _cut(self) -> None:
        """The deadline passed with the request still arriving: close the connection."""
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()


class AsgiServer(uvicorn.Server):
    """uvicorn serving ``app`` on a socket bound at once (so the port is known before
    serving), at most ``max_connections`` at a time (see the module). ``run_forever``
    blocks; ``stop`` (from any thread) ends it; ``server_close`` releases an unserved
    socket."""

    def __init__(
        self,
        app: ASGIApp,
        address: tuple[str, int],
        *,
        request_seconds: float,
        max_connections: int,
        head_seconds: float = HEAD_SECONDS,
        max_per_client: int | None = None,
    ) -> None:
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.socket.bind(address)
            self.socket.listen(1024)
            self.socket.setblocking(False)
        except BaseException:
            self.socket.close()
            raise
        self.server_address = self.socket.getsockname()
        self.request_seconds = request_seconds
        self.max_connections = max_connections
        self.head_seconds = min(head_seconds, request_seconds)
        self.max_per_client = max_per_client or max(2, max_connections // 4)
        self.open = 0  # connections served now
        self.evicted = 0  # untrusted connections closed to make room (for tests, stats)
        self._untrusted: dict[DeadlineProtocol, None] = {}  # oldest first
        self._room: asyncio.Event | None = None
        self._acceptor: asyncio.Task[None] | None = None
        grace = math.ceil(request_seconds) + 5
        config = uvicorn.Config(
            app,
            http=DeadlineProtocol,
            ws="none",
            lifespan="off",
            loop="asyncio",
            log_config=None,
            access_log=False,
            proxy_headers=False,
            server_header=False,
            h11_max_incomplete_event_size=HEADER_BYTES,
            timeout_keep_alive=math.ceil(request_seconds),  # the deadline comes first
            timeout_graceful_shutdown=grace,  # answers under way, then the rest is cut
        )
        super().__init__(config)

    def run_forever(self) -> None:
        try:
            asyncio.run(self.serve())
        finally:
            self.server_close()

    def stop(self) -> None:
        self.should_exit = True  # uvicorn's loop looks every 0.1 s

    def server_close(self) -> None:
        self.socket.close()

    def release(self, protocol: DeadlineProtocol) -> None:
        self.open -= 1
        self._untrusted.pop(protocol, None)
        if self._room is not None:
            self._room.set()

    def trusted(self, protocol: DeadlineProtocol) -> None:
        self._untrusted.pop(protocol, None)

    def _evict(self, peer: str | None = None) -> bool:
        """Close the oldest untrusted connection (of ``peer``, if given); False if none."""
        for protocol in self._untrusted:
            if peer is None or protocol.peer == peer:
                del self._untrusted[protocol]
                self.evicted += 1
                protocol.transport.abort()  # its slot comes back in connection_lost
                return True
        return False

    # replaces uvicorn's startup (its loop.create_server accepts every connection at once):
    # no public hook makes connections past a cap wait (see the module's "Public hooks")
    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await self.lifespan.startup()
        loop = asyncio.get_running_loop()
        self._room = asyncio.Event()
        self.servers = []
        self._acceptor = loop.create_task(self._accept(loop, self._room))
        self.started = True

    async def _accept(self, loop: asyncio.AbstractEventLoop, room: asyncio.Event) -> None:
        """Connections served one slot each (see the module): with every slot held by a
        trusted connection, the next waits in the listen queue; an untrusted one is closed
        to make room for it."""
        while True:
            while self.open >= self.max_connections and not self._untrusted:
                room.clear()
                await room.wait()
            try:
                connection, address = await loop.sock_accept(self.socket)
            except OSError:  # out of descriptors, an aborted handshake: try again shortly
                await asyncio.sleep(0.05)
                continue
            peer = str(address[0]) if isinstance(address, tuple) else ""
            if sum(p.peer == peer for p in self._untrusted) >= self.max_per_client:
                self._evict(peer)  # one client holds at most its share untrusted
            if self.open >= self.max_connections and not self._evict():
                connection.close()  # every slot turned trusted meanwhile: it retries
                continue
            protocol = DeadlineProtocol(
                config=self.config, server_state=self.server_state, app_state={}, _loop=loop
            )
            protocol.bounds, protocol._slot, protocol.peer = self, True, peer
            self.open += 1
            self._untrusted[protocol] = None
            try:
                await loop.connect_accepted_socket(_made(protocol), connection)
            except OSError:
                connection.close()
                if protocol._slot:
                    protocol._slot = False
                    self.release(protocol)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._acceptor is not None:
            self._acceptor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._acceptor
        self.server_close()  # the listen queue is refused from here on
        await super().shutdown(sockets)


def _made(protocol: DeadlineProtocol) -> Callable[[], DeadlineProtocol]:
    return lambda: protocol


Answer = Callable[[int, str, dict[str, str]], Response]


class Guard:
    """Methods, Host and unread bodies, before the app (see the module). ``answer(status,
    text, headers)`` writes a refusal the app's way; ``refused()`` counts one."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        methods: tuple[str, ...],
        bound_host: str,
        token: str | None,
        answer: Answer,
        not_allowed: str,
        wrong_host: Callable[[], str],
        refused: Callable[[], None] | None = None,
        authorized: Callable[[Headers], bool] | None = None,
    ) -> None:
        self.app, self.methods, self.bound_host, self.token = app, methods, bound_host, token
        self.authorized = authorized
        self.answer, self.refused = answer, refused
        self.not_allowed, self.wrong_host = not_allowed, wrong_host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = Headers(scope=scope)
        unread = [headers.get("content-length", "0") != "0" or "transfer-encoding" in headers]

        async def receiving() -> Message:
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                unread[0] = False
            return message

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if unread[0]:  # answered before its body was read: the rest is never read
                    headers.append((b"connection", b"close"))
                message["headers"] = canonical(headers)
            await send(message)

        if _head_bytes(scope) > HEADER_BYTES:  # h11 bounds only a head arriving in parts
            if self.refused is not None:
                self.refused()
            response = self.answer(400, "the request line and headers are over 64 kB", {})
        elif scope["method"] not in self.methods:
            response = self.answer(405, self.not_allowed, {"Allow": ", ".join(self.methods)})
        elif self.token is None and not host_allowed(headers.get("host"), self.bound_host):
            if self.refused is not None:
                self.refused()
            response = self.answer(403, self.wrong_host(), {})
        else:
            trust = scope.get("state", {}).get(TRUST)
            if trust is not None and (self.authorized is None or self.authorized(headers)):
                trust()  # a sender: its connection is never closed to make room
            return await self.app(scope, receiving, sending)
        await response(scope, receiving, sending)


def _head_bytes(scope: Scope) -> int:
    """The request line and headers' size as sent (within a few bytes)."""
    line = len(scope["raw_path"]) + len(scope["query_string"]) + len(scope["method"]) + 12
    return line + sum(len(name) + len(value) + 4 for name, value in scope["headers"])


_SPELLED = {b"www-authenticate": b"WWW-Authenticate"}


def canonical(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """Header names as HTTP spells them (``Content-Length``; Starlette writes them in lower
    case): names are case-insensitive, but clients that keep them in a plain dict are not."""
    return [
        (_SPELLED.get(name.lower()) or b"-".join(p.capitalize() for p in name.split(b"-")), value)
        for name, value in headers
    ]
