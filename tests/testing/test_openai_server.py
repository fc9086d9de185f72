"""ScriptedOpenAI's faults do what they say, seen from a plain HTTP client."""

from __future__ import annotations

import http.client
import json
import socket
import time

import pytest

from cofe.testing import Fault, ScriptedOpenAI

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})


def _post(server: ScriptedOpenAI, headers: dict[str, str] | None = None, timeout: float = 5.0):
    host, port = server.base_url.split("//")[1].split("/")[0].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    conn.request(
        "POST",
        "/v1/chat/completions",
        BODY,
        {"Content-Type": "application/json", **(headers or {})},
    )
    return conn.getresponse()


def test_a_reset_fault_resets_the_connection() -> None:
    with ScriptedOpenAI() as server:
        server.inject(Fault(reset=True))
        with pytest.raises((ConnectionResetError, http.client.RemoteDisconnected)):
            _post(server).read()
        assert json.loads(_post(server).read())["choices"][0]["message"]["content"] == "ok"


def test_a_trickle_fault_sends_the_reply_a_byte_at_a_time() -> None:
    with ScriptedOpenAI() as server:
        server.inject(Fault(trickle=0.01))
        response = _post(server)
        started = time.monotonic()
        first = response.read(1)
        body = first + response.read()
    assert time.monotonic() - started > 0.01 * (len(body) - 5)  # not sent in one piece
    assert json.loads(body)["choices"][0]["message"]["content"] == "ok"


def test_pad_bytes_and_echo_auth() -> None:
    with ScriptedOpenAI() as server:
        server.inject(Fault(pad_bytes=100_000), Fault(echo_auth=True))
        big = json.loads(_post(server).read())["choices"][0]["message"]["content"]
        echoed = _post(server, {"Authorization": "Bearer secret-key"})
        assert len(big) == 100_000 and echoed.status == 401
        assert "Bearer secret-key" in echoed.read().decode()


def test_api_key_and_models_are_enforced() -> None:
    with ScriptedOpenAI(models=["other"], api_key="right") as server:
        assert _post(server, {"Authorization": "Bearer wrong"}).status == 401
        assert _post(server, {"Authorization": "Bearer right"}).status == 404  # model "m"
        assert len(server.headers) == 2 and server.headers[1]["Authorization"] == "Bearer right"


def test_a_head_trickle_fault_sends_the_status_line_a_byte_at_a_time() -> None:
    with ScriptedOpenAI() as server:
        server.inject(Fault(head_trickle=0.01))
        started = time.monotonic()
        response = _post(server)
        assert time.monotonic() - started > 0.01 * 50  # the head alone is over 50 bytes
        assert response.status == 200 and response.getheader("Content-Type") == "application/json"
        assert json.loads(response.read())["choices"][0]["message"]["content"] == "ok"


def test_a_continues_fault_sends_interim_responses_before_the_reply() -> None:
    with ScriptedOpenAI() as server:
        server.inject(Fault(continues=3, continue_gap=0.01))
        host, port = server.base_url.split("//")[1].split("/")[0].split(":")
        with socket.create_connection((host, int(port)), timeout=5) as conn:
            conn.sendall(
                f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                f"application/json\r\nContent-Length: {len(BODY)}\r\n\r\n{BODY}".encode()
            )
            received = b""
            while b'"content"' not in received:
                received += conn.recv(65536)
    assert received.count(b"HTTP/1.1 100 Continue\r\n\r\n") == 3
    assert b"HTTP/1.1 200" in received.split(b"HTTP/1.1 100 Continue\r\n\r\n")[-1]


def test_kill_refuses_new_connections_and_drops_open_ones() -> None:
    with ScriptedOpenAI() as server:
        assert _post(server).status == 200
        url = server.base_url
        server.kill()
        assert server.base_url == url
        with pytest.raises(ConnectionRefusedError):
            _post(server)


def test_a_standing_fault_answers_every_later_request() -> None:
    with ScriptedOpenAI() as server:
        server.standing = Fault(status=502)
        assert [_post(server).status for _ in range(3)] == [502, 502, 502]
        server.standing = None
        assert _post(server).status == 200
