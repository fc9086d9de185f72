"""A webhook receiver that trickles its answer (issue 45, item 11): the timeout was per
read, so a head sent a byte every 3 s held the first delivery -- and every alert queued
behind it -- for ever (1 of 3 alerts attempted in 60 s, no outcome recorded), and SIGTERM
killed `cofe monitor alerts --every` recording nothing."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from cofe.monitor import MonitorStore, WebhookSink, rules_toml
from tests.conftest import REPO
from tests.monitor.test_alerts import RULE
from tests.monitor.test_hostile_alerts import _fired


@contextmanager
def trickling(seconds: float = 60.0) -> Iterator[tuple[str, list[float]]]:
    """A receiver that reads each POST and answers a byte every 3 s (for at most
    ``seconds``); its URL, and when each POST arrived."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    stop = threading.Event()
    arrived: list[float] = []

    def answer(sock: socket.socket) -> None:
        with sock:
            try:
                sock.recv(65536)
                arrived.append(time.monotonic())
                ends = time.monotonic() + seconds
                for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n":
                    if stop.wait(3.0) or time.monotonic() > ends:
                        return
                    sock.sendall(bytes([byte]))
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
            threading.Thread(target=answer, args=(sock,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/hook", arrived
    finally:
        stop.set()
        listener.close()


def test_each_alert_is_settled_within_its_deadline_against_a_trickling_receiver(tmp_path):
    with MonitorStore(tmp_path / "m.db") as store, trickling() as (url, arrived):
        alert = _fired(store)
        sink = WebhookSink(url, store, timeout=5.0, retries=1, backoff=0.05, deadline=3.0)
        started = time.monotonic()
        for n in range(3):
            sink.send(replace(alert, alert_id=f"{alert.alert_id}-{n}"))
        while len(sink.outcomes) < 3 and time.monotonic() - started < 20:
            time.sleep(0.1)
        settled = time.monotonic() - started
        sink.close(timeout=5)
    assert len(sink.outcomes) == 3 and settled < 15, (settled, sink.outcomes)
    assert all("no answer within" in o for o in sink.outcomes.values()), sink.outcomes
    assert len(arrived) >= 3  # every alert was attempted


def test_sigterm_stops_the_evaluator_and_records_what_was_not_delivered(tmp_path):
    location = tmp_path / "m.db"
    with MonitorStore(location) as store:
        _fired(store)
        store.db.execute("DELETE FROM alerts")  # the CLI fires it again itself
    rules = tmp_path / "rules.toml"
    rules.write_text(rules_toml([RULE]), encoding="utf-8")
    with trickling() as (url, arrived):
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cofe",
                "monitor",
                "alerts",
                "--store",
                str(location),
                "--rules",
                str(rules),
                "--webhook",
                url,
                "--every",
                "3s",
            ],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            ends = time.monotonic() + 30
            while not arrived and time.monotonic() < ends:
                time.sleep(0.1)
            assert arrived, "the alert was never posted"
            process.send_signal(signal.SIGTERM)
            _, err = process.communicate(timeout=40)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    with MonitorStore(location) as store:
        [(delivered,)] = store.db.execute("SELECT delivered FROM alerts")
    assert delivered, err
    [outcome] = json.loads(delivered).values()
    assert outcome.startswith("failed"), outcome
