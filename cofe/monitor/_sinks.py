"""Where alerts go: a line on stdout, a JSON line in a log file, a webhook POST.

The webhook is sent from a background thread with its own queue: ``send`` returns at
once, so neither evaluation nor ingestion ever waits for a slow or dead receiver. A
failed POST (connection error, 429, 5xx) is retried with exponential backoff; the
outcome of every alert is recorded in the store (``alerts.delivered``).
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TextIO

from cofe.monitor._alerts import Alert
from cofe.monitor._store import MonitorStore

RETRYABLE = {429, 500, 502, 503, 504}


class StdoutSink:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def send(self, alert: Alert) -> None:
        print(alert.line(), file=self.stream or sys.stdout, flush=True)

    def close(self, timeout: float = 0.0) -> None:
        pass


class LogSink:
    """One JSON object per alert, appended to ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def send(self, alert: Alert) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(alert.to_dict(), default=str, ensure_ascii=False) + "\n")

    def close(self, timeout: float = 0.0) -> None:
        pass


class WebhookSink:
    """POSTs each alert as JSON to ``url`` from a background thread, with retries."""

    def __init__(self, url: str, store: MonitorStore | None = None, *,
                 headers: dict[str, str] | None = None, retries: int = 4, backoff: float = 0.5,
                 timeout: float = 5.0) -> None:  # fmt: skip
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"webhook URL must be http(s)://, not {url!r}")
        self.url, self.store, self.headers = url, store, dict(headers or {})
        self.retries, self.backoff, self.timeout = retries, backoff, timeout
        self.outcomes: dict[str, str] = {}  # alert id -> "delivered ..." / "failed ..."
        self._queue: queue.Queue[Alert | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="cofe-webhook", daemon=True)
        self._thread.start()

    def send(self, alert: Alert) -> None:
        self._queue.put(alert)

    def _post(self, body: bytes) -> str | None:
        """None when delivered, else why not (and whether to retry: ``retry:`` prefix)."""
        request = urllib.request.Request(self.url, data=body, method="POST",
                                         headers={"Content-Type": "application/json",
                                                  **self.headers})  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                response.read()
            return None
        except urllib.error.HTTPError as error:
            prefix = "retry:" if error.code in RETRYABLE else ""
            return f"{prefix}HTTP {error.code}"
        except (urllib.error.URLError, OSError) as error:
            return f"retry:{getattr(error, 'reason', error)}"

    def _work(self) -> None:
        while True:
            alert = self._queue.get()
            if alert is None:
                self._queue.task_done()
                return
            body = json.dumps(alert.to_dict(), default=str, ensure_ascii=False).encode()
            outcome = "failed"
            for attempt in range(self.retries + 1):
                problem = self._post(body)
                if problem is None:
                    outcome = f"delivered after {attempt + 1} attempt(s)"
                    break
                outcome = f"failed after {attempt + 1} attempt(s): {problem.removeprefix('retry:')}"
                if not problem.startswith("retry:") or attempt == self.retries:
                    break
                time.sleep(self.backoff * 2**attempt)
            self.outcomes[alert.alert_id] = outcome
            if self.store is not None:
                self._record(alert.alert_id, outcome)
            self._queue.task_done()

    def _record(self, alert_id: str, outcome: str) -> None:
        assert self.store is not None
        try:
            with self.store.db.transaction():
                rows = self.store.db.execute("SELECT delivered FROM alerts WHERE alert_id = ?",
                                             [alert_id])  # fmt: skip
                delivered = json.loads(rows[0][0]) if rows else {}
                delivered[self.url_for_record] = outcome
                self.store.db.execute("UPDATE alerts SET delivered = ? WHERE alert_id = ?",
                                      [json.dumps(delivered), alert_id])  # fmt: skip
        except Exception as error:  # a closed store must not kill the sender thread
            print(f"cofe monitor: could not record a webhook outcome ({error})", file=sys.stderr)

    @property
    def url_for_record(self) -> str:
        """Where the alert went, without path, query or credentials (a webhook's secret is
        often in its path)."""
        from urllib.parse import urlsplit

        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}"

    def close(self, timeout: float = 30.0) -> None:
        """Send what is queued (waiting at most ``timeout`` seconds), then stop the thread."""
        self._queue.put(None)
        self._thread.join(timeout)
