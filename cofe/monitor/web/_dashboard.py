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

Served by uvicorn as a Starlette app (``_asgi``: why that stack, and the request deadline
and connection cap it adds); pages are rendered from the store in a worker thread, so the
event loop never waits on a read.

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
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import parse_qs, urlencode

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cofe.monitor.store import (
    MonitorStore,
    StoreError,
)
from cofe.monitor.web._asgi import AsgiServer, Guard, canonical
from cofe.monitor.web._dashboard_kit import (
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
from cofe.monitor.web._drilldown import Pages
from cofe.monitor.web._http import (
    DEFAULT_MAX_CONNECTIONS,
    check_binding,
    token_ok,
)

__all__ = ["CSP", "Dashboard", "Pages", "open_read_only"]


# --- the server ---------------------------------------------------------------------------------


# what the dashboard says as it runs (the CLI shows it on stderr: "cofe monitor serve: ...")
log = logging.getLogger("cofe.monitor.dashboard")

COOKIE_CONTEXT = b"cofe monitor dashboard session"
COOKIE_BYTES = 8 * 1024  # a Cookie header longer than this is not read (no session fits it)
PAGES: dict[str, Callable[[Pages, _Params], str]] = {
    "/": Pages.overview,
    "/window": Pages.window,
    "/round": Pages.round,
    "/trace": Pages.trace,
}


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
        self._thread: threading.Thread | None = None
        self.cookie_name = "cofe_dashboard"
        self.host = host
        try:
            self.server = AsgiServer(
                self._app(),
                (host, port),
                request_seconds=request_seconds,
                max_connections=max_connections,
            )
        except BaseException:
            self._store.close()
            raise
        self.port = self.server.server_address[1]
        self.cookie_name = f"cofe_dashboard_{self.port}"  # one per port: cookies ignore ports

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    # --- running ------------------------------------------------------------------------------

    def serve_forever(self) -> None:
        """Serve until ``shutdown`` (or an exception such as KeyboardInterrupt)."""
        try:
            self.server.run_forever()
        finally:
            self._close_store()

    def start(self) -> threading.Thread:
        self._thread = threading.Thread(
            target=self.serve_forever, name="cofe-dashboard", daemon=True
        )
        self._thread.start()
        return self._thread

    def shutdown(self) -> None:
        """Stop serving and close the store."""
        self.server.stop()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30)
        self.server.server_close()
        self._close_store()

    def _close_store(self) -> None:
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

    # --- the app ------------------------------------------------------------------------------

    def _app(self) -> Starlette:
        """Routes behind the security headers, the guard (methods, Host) and the sign-in."""
        static = [
            Route("/static/dashboard.css", self._style, methods=["GET"]),  # and HEAD
            Route("/favicon.svg", self._icon, methods=["GET"]),
            Route("/favicon.ico", self._icon, methods=["GET"]),
        ]
        return Starlette(
            routes=[Route(path, self._page, methods=["GET"]) for path in PAGES] + static,
            middleware=[
                Middleware(_Secured),
                Middleware(
                    Guard,
                    methods=("GET", "HEAD"),
                    bound_host=self.host,
                    token=self.token,
                    answer=_text,
                    not_allowed="the dashboard is read-only: GET or HEAD",
                    wrong_host=lambda: (
                        f"this dashboard answers only requests for this machine: open {self.url}"
                    ),
                    authorized=self._authorized,
                ),
                Middleware(_SignIn, dashboard=self),
            ],
            exception_handlers={HTTPException: _not_found},
        )

    async def _style(self, request: Request) -> Response:
        return Response(STYLE, media_type="text/css")

    async def _icon(self, request: Request) -> Response:
        return Response(ICON, media_type="image/svg+xml")

    async def _page(self, request: Request) -> Response:
        path = request.scope["path"]
        render = PAGES[path]
        params = _Params(request.scope["query_string"].decode("latin-1"))
        try:
            html = await run_in_threadpool(self._render, render, params)
        except BadRequest as error:
            return _text(400, str(error))
        except NotFound as error:
            return _text(404, str(error))
        except StoreError as error:
            log.warning("%s", error, extra={"event": "store_unreadable", "path": path})
            return _text(503, "the store cannot be read now; see the dashboard's output")
        except Exception:  # a bug: its traceback goes to the output, not to the browser
            log.exception("a page failed", extra={"event": "page_failed", "path": path})
            return _text(500, "the page failed; see the dashboard's output")
        return HTMLResponse(html)

    def _render(self, render: Callable[[Pages, _Params], str], params: _Params) -> str:
        with self._open_store() as store:  # in a worker thread: a read blocks
            return render(Pages(store), params)

    # --- signing in ---------------------------------------------------------------------------

    def _session(self) -> str:
        assert self.token is not None
        return hmac.new(self.token.encode(), COOKIE_CONTEXT, hashlib.sha256).hexdigest()

    def _authorized(self, headers: Headers) -> bool:
        if self.token is None:
            return True
        header = headers.get("authorization")
        if header is not None and header.startswith("Bearer "):
            return token_ok(header, self.token)
        value = cookie_value(headers.getlist("cookie"), self.cookie_name)
        return value is not None and hmac.compare_digest(value.encode(), self._session().encode())

    def _sign_in(self, scope: Scope) -> Response | None:
        """With a token: ``?token=`` once (a cookie, and the same page without it), or the
        cookie or ``Authorization: Bearer`` on every request; None lets the request on."""
        if self.token is None:
            return None
        query = scope["query_string"].decode("latin-1")
        params = _Params(query)
        if "token" not in params.values:
            return None if self._authorized(Headers(scope=scope)) else _unauthorized()
        if not token_ok(f"Bearer {params.values['token']}", self.token):
            return _unauthorized()
        kept = [(k, v) for k, v in parse_qs(query, keep_blank_values=True).items() if k != "token"]
        query = urlencode([(k, x) for k, vs in kept for x in vs])
        # one leading slash: "//evil.example/" would be another host's address
        location = "/" + scope["path"].lstrip("/\\") + (f"?{query}" if query else "")
        cookie = f"{self.cookie_name}={self._session()}; Path=/; HttpOnly; SameSite=Strict"
        return _text(303, "signed in", {"Location": location, "Set-Cookie": cookie})


def cookie_value(headers: list[str], name: str) -> str | None:
    """The value of cookie ``name`` in ``Cookie`` headers, read in one linear pass.

    Not :mod:`http.cookies`: its parser is quadratic in backslashes inside quotes
    (CVE-2024-7592; a 60 kB header held the event loop 46 s), and the session is a plain
    hex digest that needs none of its quoting. Headers longer than ``COOKIE_BYTES`` in all
    are not read (None: the request is not signed in)."""
    if sum(len(header) for header in headers) > COOKIE_BYTES:
        return None
    for header in headers:
        for pair in header.split(";"):
            key, equals, value = pair.partition("=")
            if equals and key.strip() == name:
                return value.strip().strip('"')
    return None


class _SignIn:
    """The dashboard's sign-in (:meth:`Dashboard._sign_in`) before any route."""

    def __init__(self, app: ASGIApp, *, dashboard: Dashboard) -> None:
        self.app, self.dashboard = app, dashboard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self.dashboard._sign_in(scope) if scope["type"] == "http" else None
        if refusal is None:
            return await self.app(scope, receive, send)
        await refusal(scope, receive, send)


class _Secured:
    """Every answer carries the security headers (CSP: no script at all)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = canonical(
                    [
                        *message.get("headers", []),
                        *((k.encode(), v.encode()) for k, v in _SECURITY_HEADERS.items()),
                    ]
                )
            await send(message)

        await self.app(scope, receive, sending)


def _text(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return PlainTextResponse(message + "\n", status, headers)


def _unauthorized() -> Response:
    return _text(
        401,
        "this dashboard needs its token: open /?token=<the token> "
        "once in the browser (a cookie keeps you signed in), or send "
        "Authorization: Bearer <the token>",
        {"WWW-Authenticate": 'Bearer realm="cofe monitor"'},
    )


async def _not_found(request: Request, error: Exception) -> Response:
    """The router's 404 (its 405 cannot happen: the guard answers every other method)."""
    return _text(404, "not found: the pages are /, /window, /round and /trace")
