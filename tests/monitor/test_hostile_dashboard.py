"""The second hostile hunt's findings on the dashboard (issue 45): a quadratic cookie parse
on the event loop, open redirects from the sign-in, stored values that break charts."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cofe.monitor import Dashboard, MonitorStore, refresh_windows
from tests.monitor.test_collector import TOKEN


@contextmanager
def serving(location: str, **options) -> Iterator[Dashboard]:
    dashboard = Dashboard(location, port=0, **options)
    dashboard.start()
    try:
        yield dashboard
    finally:
        dashboard.shutdown()


def _empty_store(tmp_path: Path) -> str:
    location = tmp_path / "monitor.db"
    MonitorStore(location, window_seconds=60).close()
    return str(location)


def get(
    port: int, path: str, headers: dict[str, str] | None = None, timeout: float = 60
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


# --- item 1: the cookie ------------------------------------------------------------------------


def test_a_hostile_cookie_header_costs_no_one_else_any_time(tmp_path):
    """CVE-2024-7592: http.cookies is quadratic in backslashes inside quotes; parsed on the
    event loop, one 60 kB header held every request of the dashboard for 20-46 s."""
    with serving(_empty_store(tmp_path), token=TOKEN, request_seconds=60) as dashboard:
        hostile = 'a="' + "\\" * 60_000 + '"'
        answers: list[tuple[int, float]] = []

        def attack() -> None:
            started = time.monotonic()
            status = get(dashboard.port, "/", {"Cookie": hostile})[0]
            answers.append((status, time.monotonic() - started))

        attacker = threading.Thread(target=attack)
        attacker.start()
        time.sleep(0.2)
        started = time.monotonic()
        status, _, _ = get(dashboard.port, "/", {"Authorization": f"Bearer {TOKEN}"})
        waited = time.monotonic() - started
        attacker.join(60)
        assert status == 200 and waited < 2, waited
        assert answers and answers[0][0] == 401 and answers[0][1] < 2, answers


def test_the_session_cookie_is_read_among_others_and_in_quotes(tmp_path):
    with serving(_empty_store(tmp_path), token=TOKEN) as dashboard:
        _, headers, _ = get(dashboard.port, f"/?token={TOKEN}")
        session = headers["Set-Cookie"].split(";")[0]
        name, _, value = session.partition("=")
        for cookie in (
            session,
            f"other=1; {session}; more=2",
            f'{name}="{value}"',
            f"x=y;{name}={value}",
        ):
            assert get(dashboard.port, "/", {"Cookie": cookie})[0] == 200, cookie
        for cookie in (f"{name}x={value}", f"{name}={value}x", "x" * 9000 + f"; {session}"):
            assert get(dashboard.port, "/", {"Cookie": cookie})[0] == 401, cookie


# --- t25: the sign-in's redirect stays on this server ---------------------------------------------


def test_the_sign_in_never_redirects_to_another_host(tmp_path):
    with serving(_empty_store(tmp_path), token=TOKEN) as dashboard:
        for path in ("//evil.example/", "///evil.example/", "/\\evil.example/", "//evil.example"):
            with socket.create_connection(("127.0.0.1", dashboard.port), timeout=10) as sock:
                sock.sendall(
                    f"GET {path}?token={TOKEN} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    "Connection: close\r\n\r\n".encode()
                )
                head = b""
                while b"\r\n\r\n" not in head:
                    data = sock.recv(4096)
                    if not data:
                        break
                    head += data
            lines = head.decode("latin-1").split("\r\n")
            assert lines[0].split()[1] == "303", (path, lines[0])
            location = next(
                x.split(":", 1)[1].strip() for x in lines if x.lower().startswith("location:")
            )
            assert location.startswith("/") and not location.startswith(("//", "/\\")), location


# --- item 14: a NUL in an id ---------------------------------------------------------------------


def test_a_nul_in_an_id_is_400_on_either_engine(store_location: str):
    MonitorStore(store_location, window_seconds=60).close()
    with serving(store_location) as dashboard:
        for path in ("/trace?id=%00", "/round?id=a%00b", "/window?origin=traffic%00&start=0"):
            assert get(dashboard.port, path)[0] == 400, path


# --- item 16: big values ---------------------------------------------------------------------------


def test_big_values_are_cut_on_pages_with_a_link_to_the_trace(tmp_path):
    """A 40 MB chunk, a 100,000-document pool and a 20 MB query made a 42 MB window page
    that took 16.5 s; pages show the start of each with a link to the trace's own page."""
    from tests.monitor.conftest import rag_trace
    from tests.monitor.test_collector import recent

    location = str(tmp_path / "monitor.db")
    query, answer = "why " + "q" * 5_000_000, "a" * 5_000_000
    pool = ["c" * 2_000_000] + [f"document {i}" for i in range(20_000)]
    with MonitorStore(location, window_seconds=60) as store:
        spans = recent(rag_trace(trace=f"{7:032x}", query=query, pool=pool, answer=answer))
        store.traces.ingest(spans)
        refresh_windows(store)
        start = store.window_of(spans[0].start_ns)
    with serving(location) as dashboard:
        for path in (f"/window?origin=traffic&start={start}", f"/trace?id={7:032x}"):
            began = time.monotonic()
            status, _, body = get(dashboard.port, path)
            took = time.monotonic() - began
            assert status == 200 and len(body) < 2_000_000 and took < 10, (path, len(body), took)
            assert b"Shortened" in body and b"20,001 documents" in body
        status, _, body = get(dashboard.port, f"/window?origin=traffic&start={start}")
        assert f"trace?id={7:032x}".encode() in body
