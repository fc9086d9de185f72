"""Where alerts go: a line on stdout, a JSON line in a log file, a webhook POST.

Each sink is one class implementing :class:`Sink` (``send`` delivers one alert, ``close``
finishes what is under way). A sink a user configures by name and one setting (``log``: a
path, ``webhook``: a URL) is registered here with :func:`register_sink`; ``cofe monitor
alerts --sink NAME=SETTING`` and :func:`open_sinks` find it there, so a new sink is one
class and one decorator, and the CLI needs no change to offer it.

The webhook is sent from a background thread with its own queue: ``send`` returns at
once, so neither evaluation nor ingestion ever waits for a slow or dead receiver. Each
POST has one deadline for all of it (``timeout``: a receiver trickling its answer is cut
then, not after each slow read); a failed POST (connection error, no answer in time, 429,
5xx) is retried with exponential backoff (tenacity) within ``deadline`` seconds an
alert; a redirect is a failure, never followed. In the main thread, SIGTERM (a service
manager stopping ``cofe monitor alerts --every``) ends the program as Ctrl-C does, so the
sink is closed and what it could not send is recorded. The outcome of every alert
is recorded in the store (``alerts.delivered``), also when the sink is closed before it
was sent.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import queue
import signal
import socket
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self, TextIO, TypeVar

from cofe._errors import ConfigurationError, InputError
from cofe.monitor.analysis._alerts import Alert
from cofe.monitor.store import MonitorStore

RETRYABLE = {429, 500, 502, 503, 504}

# an alert a sink could not deliver, said where the program's logging goes (the CLI: stderr)
log = logging.getLogger("cofe.monitor.alerts")


class Sink(Protocol):
    """Somewhere an alert goes. ``send`` may fail with ``OSError`` (a full disk): the loop
    says so and goes on with the other sinks, the alert being stored all the same."""

    def send(self, alert: Alert) -> None: ...

    def close(self, timeout: float = ...) -> None:
        """Finish what is under way (at most ``timeout`` seconds), then let go."""


class NamedSink(Sink, Protocol):
    """A sink configured by a name and one setting (a path, a URL)."""

    name: ClassVar[str]

    @classmethod
    def from_setting(cls, setting: str, store: MonitorStore) -> Self: ...


SINKS: dict[str, type[NamedSink]] = {}  # name -> class, filled by register_sink


_S = TypeVar("_S", bound=type[NamedSink])


def register_sink(cls: _S) -> _S:
    """Offer ``cls`` under its ``name`` (a class decorator); a name taken twice is a bug."""
    if not cls.name.isidentifier():
        raise ValueError(f"a sink's name is a word, not {cls.name!r}")
    if cls.name in SINKS and SINKS[cls.name] is not cls:
        raise ValueError(f"two sinks named {cls.name!r}: {SINKS[cls.name]!r} and {cls!r}")
    SINKS[cls.name] = cls
    return cls


def open_sinks(settings: Iterable[tuple[str, str]], store: MonitorStore) -> list[Sink]:
    """The registered sinks named in ``settings`` (``(name, setting)`` pairs, in order)."""
    opened: list[Sink] = []
    try:
        for name, setting in settings:
            if name not in SINKS:
                raise InputError(
                    f"no alert sink named {name!r} (known: {', '.join(sorted(SINKS))})"
                )
            opened.append(SINKS[name].from_setting(setting, store))
    except BaseException:  # a webhook's thread started before a bad name is let go
        for sink in opened:
            sink.close(0.0)
        raise
    return opened


class StdoutSink:
    """A line per alert on ``stream`` (stdout): always on in ``cofe monitor alerts``."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def send(self, alert: Alert) -> None:
        print(alert.line(), file=self.stream or sys.stdout, flush=True)

    def close(self, timeout: float = 0.0) -> None:
        pass


@register_sink
class LogSink:
    """One JSON object per alert, appended to ``path``."""

    name: ClassVar[str] = "log"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @classmethod
    def from_setting(cls, setting: str, store: MonitorStore) -> Self:
        return cls(setting)

    def send(self, alert: Alert) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(alert.to_dict(), default=str, ensure_ascii=False) + "\n")

    def close(self, timeout: float = 0.0) -> None:
        pass


def _post_once(
    url: str, body: bytes, headers: dict[str, str], seconds: float, max_reply: int = 65536
) -> int:
    """POST ``body`` and read the answer's status (and at most ``max_reply`` bytes of its
    body) within ``seconds`` in all: a socket timeout bounds each read, so a receiver
    trickling its head a byte every 3 s held a delivery -- and every alert queued behind
    it -- for ever; here a timer shuts the socket down at the deadline. Redirects are not
    followed (http.client follows none). ``TimeoutError`` past the deadline."""
    parts = urllib.parse.urlsplit(url)
    connection_class = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    connection = connection_class(parts.hostname or "", parts.port, timeout=seconds)
    cut = threading.Event()

    def expire() -> None:
        cut.set()
        sock = connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        response.read(max_reply)
        if cut.is_set():
            raise TimeoutError
        return response.status
    except (OSError, http.client.HTTPException):
        if cut.is_set():
            raise TimeoutError from None
        raise
    finally:
        timer.cancel()
        connection.close()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # the caller's finally closes the sink, recording what is left


@register_sink
class WebhookSink:
    """POSTs each alert as JSON to ``url`` from a background thread, with retries
    (tenacity: exponential backoff, at most ``retries`` more attempts and ``deadline``
    seconds per alert). A redirect is a failure; an alert still unsent when the sink is
    closed is recorded as not delivered, so no alert leaves nothing behind."""

    name: ClassVar[str] = "webhook"

    def __init__(
        self,
        url: str,
        store: MonitorStore | None = None,
        *,
        headers: dict[str, str] | None = None,
        retries: int = 4,
        backoff: float = 0.5,
        timeout: float = 5.0,
        deadline: float = 20.0,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ConfigurationError(f"webhook URL must be http(s)://, not {url!r}")
        self.url, self.store, self.headers = url, store, dict(headers or {})
        self.retries, self.backoff, self.timeout = retries, backoff, timeout
        self.deadline = deadline
        self.outcomes: dict[str, str] = {}  # alert id -> "delivered ..." / "failed ..."
        self._pending: dict[str, Alert] = {}  # queued or being sent
        self._pending_lock = threading.Lock()
        self._queue: queue.Queue[Alert | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="cofe-webhook", daemon=True)
        self._thread.start()
        self._sigterm: Any = None
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        ):  # killed by default, nothing would be recorded: stopped as Ctrl-C stops it
            self._sigterm = signal.signal(signal.SIGTERM, _interrupt)

    @classmethod
    def from_setting(cls, setting: str, store: MonitorStore) -> Self:
        return cls(setting, store)

    def send(self, alert: Alert) -> None:
        with self._pending_lock:
            self._pending[alert.alert_id] = alert
        self._queue.put(alert)

    def _post(self, body: bytes, seconds: float | None = None) -> str | None:
        """None when delivered, else why not (and whether to retry: ``retry:`` prefix)."""
        headers = {"Content-Type": "application/json", **self.headers}
        seconds = self.timeout if seconds is None else seconds
        try:
            status = _post_once(self.url, body, headers, seconds)
        except TimeoutError:
            return f"retry:no answer within {seconds:g} s"
        except (OSError, http.client.HTTPException) as error:
            return f"retry:{error or type(error).__name__}"
        if 200 <= status < 300:
            return None
        if 300 <= status < 400:
            # a redirect is a failure: following a 302 would turn the POST into a bodiless
            # GET that answers 200, and the alert would be recorded delivered, never sent
            return f"redirected (HTTP {status}), not followed"
        prefix = "retry:" if status in RETRYABLE else ""
        return f"{prefix}HTTP {status}"

    def _deliver(self, body: bytes) -> str:
        """The outcome of one alert after its attempts: ``delivered ...`` or ``failed ...``."""
        from tenacity import (  # the monitor extra's; imported where it is used
            Retrying,
            retry_if_result,
            stop_after_attempt,
            stop_after_delay,
            wait_exponential,
        )

        attempts = Retrying(
            retry=retry_if_result(
                lambda problem: problem is not None and problem.startswith("retry:")
            ),
            stop=stop_after_attempt(self.retries + 1) | stop_after_delay(self.deadline),
            wait=wait_exponential(multiplier=self.backoff, max=30),
            retry_error_callback=lambda state: state.outcome.result() if state.outcome else None,
        )
        tries = 0
        ends = time.monotonic() + self.deadline

        def attempt() -> str | None:
            nonlocal tries
            tries += 1  # the last attempt gets what is left of the alert's deadline
            return self._post(body, max(0.1, min(self.timeout, ends - time.monotonic())))

        problem = attempts(attempt)
        if problem is None:
            return f"delivered after {tries} attempt(s)"
        return f"failed after {tries} attempt(s): {problem.removeprefix('retry:')}"

    def _work(self) -> None:
        while True:
            alert = self._queue.get()
            if alert is None:
                self._queue.task_done()
                return
            body = json.dumps(alert.to_dict(), default=str, ensure_ascii=False).encode()
            try:
                outcome = self._deliver(body)
            except Exception as error:  # the sender thread must outlive any one alert
                outcome = f"failed: {type(error).__name__}: {error}"
            self._finish(alert.alert_id, outcome)
            self._queue.task_done()

    def _finish(self, alert_id: str, outcome: str) -> None:
        with self._pending_lock:
            if self._pending.pop(alert_id, None) is None:
                return  # closed meanwhile: already recorded as not delivered
        self.outcomes[alert_id] = outcome
        if self.store is not None:
            self._record(alert_id, outcome)

    def _record(self, alert_id: str, outcome: str) -> None:
        assert self.store is not None
        try:
            self.store.alerts.record_delivery(alert_id, self.url_for_record, outcome)
        except Exception as error:  # a closed store must not kill the sender thread
            log.error(
                "could not record a webhook outcome (%s)",
                error,
                extra={"event": "record_failed", "alert_id": alert_id, "error": str(error)},
            )

    @property
    def url_for_record(self) -> str:
        """Where the alert went, without path, query or credentials (a webhook's secret is
        often in its path)."""
        from urllib.parse import urlsplit

        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}"

    def close(self, timeout: float = 30.0) -> None:
        """Send what is queued (waiting at most ``timeout`` seconds), then stop the thread;
        an alert not delivered by then is recorded (and said on stderr) as not delivered."""
        if self._sigterm is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._sigterm)
            self._sigterm = None
        self._queue.put(None)
        self._thread.join(timeout)
        with self._pending_lock:
            left, self._pending = dict(self._pending), {}
        for alert_id in left:
            outcome = f"failed: not delivered within {timeout:g} s (the webhook did not answer)"
            self.outcomes[alert_id] = outcome
            log.error(
                "alert %s %s at %s",
                alert_id,
                outcome,
                self.url_for_record,
                extra={"event": "not_delivered", "alert_id": alert_id, "outcome": outcome},
            )
            if self.store is not None:
                self._record(alert_id, outcome)
