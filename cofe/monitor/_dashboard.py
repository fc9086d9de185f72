"""``cofe monitor serve``: a read-only web dashboard over the monitoring store.

Pages, all rendered on the server from the store (no script at all: charts are inline
SVG whose markers are links, filters are links, and collapsed text is ``<details>``):

- ``/``: per-stage time series -- the label-free traffic signals per window and the
  canary measures per round (KeywordRecall at each step, verdict shares per stage) --
  and the alert history, over a time range (``?range=24h``, ``&until=<ns>``);
- ``/window?origin=traffic&start=<ns>``: the traces of one window (what a click on a
  traffic point opens): query, stages, latency, problems, the context's chunk texts, the
  pool and the answer; with ``&signal=<stage>/<Signal>`` sorted by that signal's
  per-trace value, worst first;
- ``/round?id=<round>``: one canary round (what a click on a canary point opens): its
  measures, verdict counts and cases -- verdict, the stage blamed, the evidence and what
  each stage of the case's trace produced;
- ``/trace?id=<trace>``: one trace (alert examples link here).

Security: loopback by default; any other address needs a token (``check_binding``,
shared with the collector). With a token every request needs it -- ``Authorization:
Bearer``, or once in a browser ``/?token=...``, which sets an HttpOnly SameSite=Strict
cookie (a keyed hash of the token, never the token) and redirects to the same page
without it. Without a token, the Host header must name this machine (a page elsewhere
cannot reach the dashboard through DNS rebinding). Only GET and HEAD (anything else is
405). Nothing about a request is logged, and no page or header repeats the token. Every
text from the store is escaped; the Content-Security-Policy allows no script at all and
only this server's stylesheet and icon. The store is opened read-only (SQLite
``query_only``, PostgreSQL read-only transactions): the dashboard never creates,
migrates, refreshes or prunes it; a collector may write meanwhile (SQLite's WAL lets
readers and the writer proceed together; every request reads what is committed).
"""

from __future__ import annotations

import hashlib
import hmac
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from cofe.monitor._dashboard_kit import (
    _SECURITY_HEADERS,
    CSP,
    DEFAULT_PORT,
    ICON,
    STYLE,
    BadRequest,
    NotFound,
    _Params,
    open_read_only,
)
from cofe.monitor._drilldown import Pages
from cofe.monitor._http import (
    DEFAULT_MAX_CONNECTIONS,
    BoundedServer,
    DeadlineHandler,
    check_binding,
    host_allowed,
    token_ok,
)
from cofe.monitor.store import (
    MonitorStore,
    StoreError,
)

__all__ = ["CSP", "Dashboard", "Pages", "open_read_only"]


# --- the server ---------------------------------------------------------------------------------


COOKIE_CONTEXT = b"cofe monitor dashboard session"


class Dashboard:
    """The dashboard's HTTP server; ``serve_forever`` blocks, ``start`` runs it in a thread.

    One connection to the store serves every request, one request at a time (pages are
    small reads); a connection that fails is reopened on the next request."""

    def __init__(
        self,
        store_location: str,
        *,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        token: str | None = None,
        request_seconds: float = 15.0,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        check_binding(host, token)  # before the store is touched
        self.location = str(store_location)
        self.token = token or None
        self._lock = threading.Lock()
        self._store: MonitorStore | None = open_read_only(self.location)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.cookie_name = "cofe_dashboard"
        dashboard = self

        class Handler(DeadlineHandler):
            def version_string(self) -> str:
                return "cofe-dashboard"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # a request line may hold the token (?token=...): nothing is logged

            def do_GET(self) -> None:
                self.request_read()  # a GET has no body: the request is in
                dashboard._handle(self, head=False)

            def do_HEAD(self) -> None:
                self.request_read()
                dashboard._handle(self, head=True)

            def send_error(
                self, code: int, message: str | None = None, explain: str | None = None
            ) -> None:
                # http.server's own errors (a malformed request line, headers too long)
                # would repeat the request line -- and a token in it: only the status here
                self.close_connection = True
                try:
                    phrase = HTTPStatus(code).phrase
                except ValueError:
                    phrase = "error"
                dashboard._text(self, code, f"{code} {phrase}", head=self.command == "HEAD")

            def __getattr__(self, name: str) -> Any:
                if name.startswith("do_"):  # any other method: 405, not http.server's 501
                    return lambda: dashboard._not_allowed(self)
                raise AttributeError(name)

        try:
            self.server = BoundedServer(
                (host, port),
                Handler,
                request_seconds=request_seconds,
                max_connections=max_connections,
            )
        except BaseException:
            self._store.close()
            raise
        self.host = host
        self.port = self.server.server_address[1]
        self.cookie_name = f"cofe_dashboard_{self.port}"  # one per port: cookies ignore ports

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    # --- running ------------------------------------------------------------------------------

    def serve_forever(self) -> None:
        """Serve until ``shutdown`` (or an exception such as KeyboardInterrupt)."""
        # one request at a time is accepted here and handled in its own thread; a loop of
        # our own (not socketserver's serve_forever) so that a shutdown asked for before
        # the loop started is not lost
        self.server.timeout = 0.2
        try:
            while not self._stop.is_set():
                self.server.handle_request()
        finally:
            self.server.server_close()
            with self._lock:
                if self._store is not None:
                    self._store.close()
                    self._store = None

    def start(self) -> threading.Thread:
        self._thread = threading.Thread(
            target=self.serve_forever, name="cofe-dashboard", daemon=True
        )
        self._thread.start()
        return self._thread

    def shutdown(self) -> None:
        """Stop serving and close the store."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30)
        self.server.server_close()
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    @contextmanager
    def _open_store(self) -> Iterator[MonitorStore]:
        with self._lock:
            if self._store is None:
                self._store = open_read_only(self.location)
            try:
                yield self._store
            except (BadRequest, NotFound):
                raise
            except Exception:
                try:  # the connection may be broken (a restarted server): reopen next time
                    self._store.close()
                finally:
                    self._store = None
                raise

    # --- requests -------------------------------------------------------------------------

    def _session(self) -> str:
        assert self.token is not None
        return hmac.new(self.token.encode(), COOKIE_CONTEXT, hashlib.sha256).hexdigest()

    def _authorized(self, request: BaseHTTPRequestHandler) -> bool:
        if self.token is None:
            return True
        header = request.headers.get("Authorization")
        if header is not None and header.startswith("Bearer "):
            return token_ok(header, self.token)
        try:
            cookies = SimpleCookie(request.headers.get("Cookie") or "")
        except CookieError:
            return False
        morsel = cookies.get(self.cookie_name)
        return morsel is not None and hmac.compare_digest(
            morsel.value.encode(), self._session().encode()
        )

    def _host_ok(self, request: BaseHTTPRequestHandler) -> bool:
        """Without a token, only requests naming this machine (no DNS rebinding)."""
        return self.token is not None or host_allowed(request.headers.get("Host"), self.host)

    def _not_allowed(self, request: BaseHTTPRequestHandler) -> None:
        request.close_connection = True  # its body, if any, is not read
        self._send(
            request,
            405,
            "text/plain; charset=utf-8",
            b"the dashboard is read-only: GET or HEAD\n",
            head=False,
            extra={"Allow": "GET, HEAD"},
        )

    def _send(
        self,
        request: BaseHTTPRequestHandler,
        status: int,
        content_type: str,
        body: bytes,
        *,
        head: bool,
        extra: dict[str, str] | None = None,
    ) -> None:
        request.send_response(status)
        request.send_header("Content-Type", content_type)
        request.send_header("Content-Length", str(len(body)))
        for key, value in {**_SECURITY_HEADERS, **(extra or {})}.items():
            request.send_header(key, value)
        request.end_headers()
        if not head:
            request.wfile.write(body)

    def _text(
        self,
        request: BaseHTTPRequestHandler,
        status: int,
        message: str,
        head: bool,
        extra: dict[str, str] | None = None,
    ) -> None:
        self._send(
            request,
            status,
            "text/plain; charset=utf-8",
            (message + "\n").encode(),
            head=head,
            extra=extra,
        )

    def _handle(self, request: BaseHTTPRequestHandler, *, head: bool) -> None:
        parts = urlsplit(request.path)
        path = parts.path
        if not self._host_ok(request):
            return self._text(
                request,
                403,
                f"this dashboard answers only requests for this machine: open {self.url}",
                head,
            )
        params = _Params(parts.query)
        if "token" in params.values and self.token is not None:
            given = params.values["token"]
            if not token_ok(f"Bearer {given}", self.token):
                return self._unauthorized(request, head)
            kept = [
                (k, v)
                for k, v in parse_qs(parts.query, keep_blank_values=True).items()
                if k != "token"
            ]
            query = urlencode([(k, x) for k, vs in kept for x in vs])
            location = (path or "/") + (f"?{query}" if query else "")
            cookie = f"{self.cookie_name}={self._session()}; Path=/; HttpOnly; SameSite=Strict"
            return self._send(
                request,
                303,
                "text/plain; charset=utf-8",
                b"signed in\n",
                head=head,
                extra={"Location": location, "Set-Cookie": cookie},
            )
        if not self._authorized(request):
            return self._unauthorized(request, head)
        if path == "/static/dashboard.css":
            return self._send(request, 200, "text/css; charset=utf-8", STYLE.encode(), head=head)
        if path in ("/favicon.svg", "/favicon.ico"):
            return self._send(request, 200, "image/svg+xml", ICON, head=head)
        routes: dict[str, Callable[[Pages, _Params], str]] = {
            "/": Pages.overview,
            "/window": Pages.window,
            "/round": Pages.round,
            "/trace": Pages.trace,
        }
        render = routes.get(path)
        if render is None:
            return self._text(
                request, 404, "not found: the pages are /, /window, /round and /trace", head
            )
        try:
            with self._open_store() as store:
                html = render(Pages(store), params)
        except BadRequest as error:
            return self._text(request, 400, str(error), head)
        except NotFound as error:
            return self._text(request, 404, str(error), head)
        except StoreError as error:
            print(f"cofe monitor serve: {error}", file=sys.stderr, flush=True)
            return self._text(
                request, 503, "the store cannot be read now; see the dashboard's output", head
            )
        except Exception:
            print(
                "cofe monitor serve: a page failed:\n" + traceback.format_exc(),
                file=sys.stderr,
                flush=True,
            )
            return self._text(request, 500, "the page failed; see the dashboard's output", head)
        self._send(request, 200, "text/html; charset=utf-8", html.encode(), head=head)

    def _unauthorized(self, request: BaseHTTPRequestHandler, head: bool) -> None:
        self._text(
            request,
            401,
            "this dashboard needs its token: open /?token=<the token> "
            "once in the browser (a cookie keeps you signed in), or send "
            "Authorization: Bearer <the token>",
            head,
            extra={"WWW-Authenticate": 'Bearer realm="cofe monitor"'},
        )
