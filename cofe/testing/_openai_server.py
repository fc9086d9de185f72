"""A real HTTP server on 127.0.0.1 that speaks OpenAI chat completions with scripted replies.

LLM code paths are tested against it exactly as against a hosted endpoint
(the real ``openai`` client, real sockets, real retries), with faults that
can be injected per request: an HTTP status with headers (429 with
Retry-After, 500), a delay, a raw body (invalid JSON), a reply trickled a
byte at a time (its body, or its status line and headers), interim
``100 Continue`` responses before the reply, an oversized reply, a
connection reset, and an error that echoes the request's Authorization
header (as careless servers do). ``kill()`` stops the server mid-run: every
later request finds the port closed (a dead endpoint).
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[list[dict[str, Any]], dict[str, Any]], str]


@dataclass(frozen=True)
class Fault:
    """What to do instead of (or before) answering one request."""

    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: str | None = None
    trickle: float = 0.0  # seconds between bytes of the (otherwise normal) reply's body
    head_trickle: float = 0.0  # seconds between bytes of the status line and headers
    continues: int = 0  # interim "HTTP/1.1 100 Continue" responses sent before the reply
    continue_gap: float = 0.1  # seconds between them
    pad_bytes: int = 0  # the reply's content is this many bytes of "x" (an oversized reply)
    reset: bool = False  # close the connection with a TCP RST instead of answering
    echo_auth: bool = False  # a 401 whose message repeats the Authorization header


def _count_tokens(text: str) -> int:
    return max(1, len(text.split()))


class ScriptedOpenAI:
    """``with ScriptedOpenAI(reply) as server: OpenAI(base_url=server.base_url, ...)``.

    ``reply(messages, request)`` returns the assistant's text; ``faults`` are
    consumed one per request before replying, and when none is queued the
    ``standing`` fault (if set) applies to every request (``Fault(status=502)``:
    a broken gateway from now on); ``latency`` delays every reply.
    Every request body is kept in ``requests``, its headers in ``headers``.
    """

    def __init__(
        self,
        reply: Reply | None = None,
        *,
        latency: float = 0.0,
        models: Sequence[str] | None = None,
        api_key: str | None = None,
    ) -> None:
        self.reply = reply or (lambda messages, request: "ok")
        self.latency = latency
        # models=None serves any model name (and lists none); a list is what /models shows,
        # and a chat request for another model is a 404, as from OpenAI
        self.models = list(models) if models is not None else None
        self.api_key = api_key  # when set, any other key is a 401
        self.faults: deque[Fault] = deque()
        self.standing: Fault | None = None  # every request's fault when none is queued
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # each request's headers, in order
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()  # open client connections (for kill)
        self._server: ThreadingHTTPServer | None = None
        self._dead_url: str | None = None  # the address a killed server listened on
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            if self._dead_url is not None:
                return self._dead_url
            raise RuntimeError("the server is not running")
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # bound to "127.0.0.1" (typeshed allows a bytes host too)
        return f"http://{host}:{port}/v1"

    def inject(self, *faults: Fault) -> None:
        with self._lock:
            self.faults.extend(faults)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.popleft() if self.faults else self.standing

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self) -> None:
                with server._lock:
                    server._connections.discard(self.connection)
                with contextlib.suppress(OSError):  # killed: the socket is already gone
                    super().finish()

            def _send(
                self,
                status: int,
                body: str,
                headers: dict[str, str] | None = None,
                trickle: float = 0.0,
                head_trickle: float = 0.0,
            ) -> None:
                data = body.encode()
                try:
                    if head_trickle:  # the status line and headers a byte at a time
                        head = [
                            f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}",
                            "Content-Type: application/json",
                            f"Content-Length: {len(data)}",
                            *(f"{k}: {v}" for k, v in (headers or {}).items()),
                        ]
                        self._trickle(("\r\n".join(head) + "\r\n\r\n").encode(), head_trickle)
                    else:
                        self.send_response(status)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(data)))
                        for k, v in (headers or {}).items():
                            self.send_header(k, v)
                        self.end_headers()
                    if not trickle:
                        self.wfile.write(data)
                        return
                    self._trickle(data, trickle)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    self.close_connection = True  # the client gave up: nothing to answer

            def _trickle(self, data: bytes, gap: float) -> None:
                for i in range(len(data)):  # one byte at a time, until the client hangs up
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                    time.sleep(gap)

            def _continues(self, count: int, gap: float) -> bool:
                """Interim 100 Continue responses; False when the client hung up meanwhile."""
                try:
                    for _ in range(count):
                        self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                        self.wfile.flush()
                        time.sleep(gap)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    self.close_connection = True
                    return False
                return True

            def _reset(self) -> None:
                """Close with SO_LINGER 0: the client sees 'connection reset by peer'."""
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.close_connection = True
                self.connection.close()

            def _refused(self) -> bool:
                """A 401 when the server wants a key and this request's is not it."""
                if server.api_key is None:
                    return False
                if self.headers.get("Authorization") == f"Bearer {server.api_key}":
                    return False
                self._send(
                    401,
                    json.dumps(
                        {
                            "error": {
                                "message": "Incorrect API key provided",
                                "type": "invalid_request_error",
                            }
                        }
                    ),
                )
                return True

            def do_GET(self) -> None:
                if self._refused():
                    return
                if self.path.rstrip("/").endswith("/models"):
                    self._send(
                        200,
                        json.dumps(
                            {
                                "object": "list",
                                "data": [
                                    {"id": name, "object": "model", "owned_by": "cofe"}
                                    for name in server.models or []
                                ],
                            }
                        ),
                    )
                else:
                    self._send(404, json.dumps({"error": {"message": "not found"}}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    self._send(400, json.dumps({"error": {"message": "invalid JSON body"}}))
                    return
                with server._lock:
                    server.requests.append(request)
                    server.headers.append(dict(self.headers))
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": "not found"}}))
                    return
                if self._refused():
                    return
                if server.models is not None and request.get("model") not in server.models:
                    missing = f"The model {request.get('model')!r} does not exist"
                    self._send(404, json.dumps({"error": {"message": missing}}))
                    return
                fault = server._next_fault()
                if fault is not None and fault.delay:
                    time.sleep(fault.delay)
                if fault is not None and fault.reset:
                    self._reset()
                    return
                if (
                    fault is not None
                    and fault.continues
                    and not self._continues(fault.continues, fault.continue_gap)
                ):
                    return  # the client hung up on the interim responses
                if fault is not None and fault.echo_auth:
                    echoed = f"Incorrect API key provided: {self.headers.get('Authorization')}"
                    self._send(
                        401,
                        json.dumps({"error": {"message": echoed, "type": "invalid_request_error"}}),
                    )
                    return
                if fault is not None and fault.status is not None:
                    message = {"error": {"message": f"scripted {fault.status}", "type": "scripted"}}
                    self._send(
                        fault.status,
                        fault.body or json.dumps(message),
                        fault.headers,
                        fault.trickle,
                        fault.head_trickle,
                    )
                    return
                if fault is not None and fault.body is not None:
                    self._send(200, fault.body, fault.headers, fault.trickle, fault.head_trickle)
                    return
                if server.latency:
                    time.sleep(server.latency)
                messages = request.get("messages", [])
                try:
                    text = server.reply(messages, request)
                    if fault is not None and fault.pad_bytes:
                        text = "x" * fault.pad_bytes
                except Exception as error:  # a broken script is a 500, like a broken server
                    self._send(500, json.dumps({"error": {"message": repr(error)}}))
                    return
                prompt = " ".join(str(m.get("content", "")) for m in messages)
                usage = {
                    "prompt_tokens": _count_tokens(prompt),
                    "completion_tokens": _count_tokens(text),
                }
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                self._send(
                    200,
                    json.dumps(
                        {
                            "id": f"chatcmpl-{len(server.requests)}",
                            "object": "chat.completion",
                            "created": int(time.time()),
                            "model": request.get("model", "scripted"),
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text},
                                }
                            ],
                            "usage": usage,
                        }
                    ),
                    trickle=fault.trickle if fault is not None else 0.0,
                    head_trickle=fault.head_trickle if fault is not None else 0.0,
                )

        return Handler

    def start(self) -> ScriptedOpenAI:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def kill(self) -> None:
        """Die as a crashed server does: drop every open connection and stop listening
        (later connections are refused). ``base_url`` still names the dead address. May be
        called from ``reply``: that request gets no answer."""
        if self._server is None:
            return
        self._dead_url = self.base_url
        self.stop()
        with self._lock:
            open_now, self._connections = list(self._connections), set()
        for conn in open_now:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> ScriptedOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
