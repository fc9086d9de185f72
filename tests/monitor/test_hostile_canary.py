"""A canary's service that redirects (issue 45, item 10): urllib followed a 301/302/303 to
another origin with `Authorization: Bearer <COFE_CANARY_TOKEN>`."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from cofe.monitor import MonitorStore, run_canary

TOKEN = "canary-secret-0123456789"


@contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirecting_service_gets_no_token_elsewhere(
    tmp_path: Path, small_evalset: Path, status: int
):
    seen: list[dict[str, str]] = []

    class Elsewhere(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(dict(self.headers))
            self.send_response(200)
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    with serving(Elsewhere) as other:

        class Redirecting(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                self.send_response(status)
                self.send_header("Location", f"{other}/steal")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        with serving(Redirecting) as service, MonitorStore(tmp_path / "m.db") as store:
            result = run_canary(
                store,
                small_evalset,
                tmp_path / "runs",
                send=f"{service}/query",
                headers={"Authorization": f"Bearer {TOKEN}"},
                wait_seconds=1.0,
            )
    assert seen == []  # nothing reached the other origin, the token least of all
    manifest = json.loads((result.run_dir / "manifest.json").read_text(encoding="utf-8"))
    not_sent = manifest["meta"]["not_sent"]
    assert not_sent and all("redirect" in why for why in not_sent.values())
    assert result.answered == 0


def test_the_canary_command_exits_1_when_its_queries_were_redirected(
    tmp_path: Path, small_evalset: Path, capsys: pytest.CaptureFixture[str], monkeypatch
):
    """The round is stored and scored, but it measured nothing the service answered: the
    command said so only in the manifest and exited 0, so cron and CI saw success."""
    from cofe.cli import main

    class Redirecting(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(302)
            self.send_header("Location", "http://elsewhere.invalid/steal")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    monkeypatch.setenv("COFE_CANARY_TOKEN", TOKEN)
    with serving(Redirecting) as service:
        code = main(
            [
                "monitor",
                "canary",
                "--store",
                str(tmp_path / "m.db"),
                "--evalset",
                str(small_evalset),
                "--runs",
                str(tmp_path / "runs"),
                "--send",
                f"{service}/query",
                "--wait",
                "1",
            ]
        )
    captured = capsys.readouterr()
    assert code == 1
    [line] = captured.err.strip().splitlines()
    assert "queries were not sent" in line and "HTTP 302" in line and "redirect" in line
    assert TOKEN not in captured.err + captured.out
    assert "canary round" in captured.out  # the round itself is still reported


def test_the_canary_command_exits_0_when_every_query_was_sent(
    tmp_path: Path, small_evalset: Path, capsys: pytest.CaptureFixture[str]
):
    from cofe.cli import main

    class Accepting(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: object) -> None:
            pass

    with serving(Accepting) as service:
        code = main(
            [
                "monitor",
                "canary",
                "--store",
                str(tmp_path / "m.db"),
                "--evalset",
                str(small_evalset),
                "--runs",
                str(tmp_path / "runs"),
                "--send",
                f"{service}/query",
                "--wait",
                "0.5",
            ]
        )
    assert code == 0 and capsys.readouterr().err == ""
