"""Issue 10, items 9 and 16: a faulty endpoint ends in a retry or a recorded reason, in time.

Every test talks to the real loopback ``ScriptedOpenAI`` server through the
real ``openai`` client; afterwards nothing invalid is in the cache.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from cofe._cache import Cache
from cofe.llm import Endpoint, LLMClient, LLMDeadlineError, LLMReplyError
from cofe.testing import Fault, ScriptedOpenAI

GOOD = json.dumps({"city": "Paris", "year": 1889})
MESSAGES = [{"role": "user", "content": "When and where? JSON please."}]
KEY = "sk-test-0123456789abcdef"


class Answer(BaseModel):
    city: str
    year: int


def _client(server: ScriptedOpenAI, cache: Cache | None = None, **limits) -> LLMClient:
    limits = {"timeout": 1.0, "max_retries": 2, "deadline": 2.0, **limits}
    return LLMClient(
        Endpoint.from_env(base_url=server.base_url, model="m", api_key=KEY, **limits), cache=cache
    )


def _cached_texts(root: Path) -> list[str]:
    return [json.loads(p.read_text())["text"] for p in root.rglob("*.json")]


def _assert_only_valid_in_cache(root: Path) -> None:
    for text in _cached_texts(root):
        Answer.model_validate_json(text)  # raises for anything invalid


def test_a_trickling_server_is_cut_at_the_deadline(tmp_path: Path) -> None:
    with ScriptedOpenAI(lambda m, r: GOOD) as server:
        server.inject(Fault(trickle=0.05))  # ~250 bytes at 20 bytes/s: 12 s if waited for
        client = _client(server, Cache(tmp_path), deadline=1.0)
        started = time.monotonic()
        result = client.structured(MESSAGES, Answer)
        elapsed = time.monotonic() - started
    assert elapsed < 2.0  # the deadline, not the socket timeout (never hit: bytes keep coming)
    assert not result.ok and "LLMDeadlineError" in result.error and "deadline" in result.error
    assert _cached_texts(tmp_path) == []


def test_complete_on_a_trickling_server_raises_a_deadline_error() -> None:
    with ScriptedOpenAI(lambda m, r: "Paris.") as server:
        server.inject(Fault(trickle=0.05))
        client = _client(server, deadline=0.6)
        started = time.monotonic()
        with pytest.raises(LLMDeadlineError):
            client.complete(MESSAGES)
    assert time.monotonic() - started < 1.5 and client.usage.failures == 1


def test_an_oversized_reply_is_refused_with_a_reason_and_not_cached(tmp_path: Path) -> None:
    with ScriptedOpenAI(lambda m, r: GOOD) as server:
        server.inject(Fault(pad_bytes=200_000))
        client = _client(server, Cache(tmp_path), max_reply_bytes=50_000)
        result = client.structured(MESSAGES, Answer)
        assert len(server.requests) == 1  # the same question would get the same answer
    assert not result.ok and "50000-byte cap" in result.error
    assert _cached_texts(tmp_path) == []


def test_an_oversized_reply_without_content_length_is_cut_while_reading(tmp_path: Path) -> None:
    # a chunked body announces no size: the cap applies to the bytes as they arrive
    with ScriptedOpenAI(lambda m, r: GOOD) as server:
        server.inject(Fault(pad_bytes=5_000, trickle=0.0001))
        client = _client(server, Cache(tmp_path), max_reply_bytes=1_000)
        with pytest.raises(LLMReplyError, match="byte cap"):
            client.complete(MESSAGES)
    assert _cached_texts(tmp_path) == []


def test_invalid_json_twice_is_a_reason_and_neither_reply_is_cached(tmp_path: Path) -> None:
    replies = iter(['{"city": "Paris", "year": ', "still not JSON", GOOD])
    with ScriptedOpenAI(lambda m, r: next(replies)) as server:
        client = _client(server, Cache(tmp_path))
        result = client.structured(MESSAGES, Answer)
        assert not result.ok and "after one repair" in result.error and "not JSON" in result.error
        assert _cached_texts(tmp_path) == []  # the old code cached both invalid replies
        again = _client(server, Cache(tmp_path)).structured(MESSAGES, Answer)
        assert again.ok and len(server.requests) == 3  # asked again, not served the bad reply
    _assert_only_valid_in_cache(tmp_path)


def test_an_invalid_http_body_is_a_recorded_reason_not_a_cached_answer(tmp_path: Path) -> None:
    with ScriptedOpenAI(lambda m, r: GOOD) as server:
        server.inject(Fault(body="{not json"), Fault(body="[1, 2"))
        client = _client(server, Cache(tmp_path))
        result = client.structured(MESSAGES, Answer)
        assert not result.ok and "LLMReplyError" in result.error and "not JSON" in result.error
        with pytest.raises(LLMReplyError, match="not JSON"):
            client.complete(MESSAGES)
    assert _cached_texts(tmp_path) == []


def test_429_with_retry_after_is_honoured_then_retried(tmp_path: Path) -> None:
    with ScriptedOpenAI(lambda m, r: GOOD) as server:
        server.inject(Fault(status=429, headers={"Retry-After": "0.4"}))
        client = _client(server, Cache(tmp_path))
        started = time.monotonic()
        result = client.structured(MESSAGES, Answer)
        elapsed = time.monotonic() - started
        assert len(server.requests) == 2
    assert result.ok and 0.4 <= elapsed < 2.0
    _assert_only_valid_in_cache(tmp_path)


def test_a_retry_after_beyond_the_bound_is_not_waited_for() -> None:
    with ScriptedOpenAI(lambda m, r: GOOD) as server:
        server.inject(Fault(status=429, headers={"Retry-After": "3600"}))
        client = _client(server, deadline=30.0, max_retry_after=5.0)
        started = time.monotonic()
        result = client.structured(MESSAGES, Answer)
        assert len(server.requests) == 1
    assert time.monotonic() - started < 1.0
    assert not result.ok and "RateLimitError" in result.error and "429" in result.error


def test_a_connection_reset_is_retried(tmp_path: Path) -> None:
    with ScriptedOpenAI(lambda m, r: GOOD) as server:
        server.inject(Fault(reset=True))
        client = _client(server, Cache(tmp_path))
        result = client.structured(MESSAGES, Answer)
        assert len(server.requests) == 2
    assert result.ok and result.value == Answer(city="Paris", year=1889)
    _assert_only_valid_in_cache(tmp_path)


def test_connection_resets_past_the_retries_are_a_reason_within_the_deadline() -> None:
    with ScriptedOpenAI(lambda m, r: GOOD) as server:
        server.inject(*[Fault(reset=True)] * 3)
        client = _client(server, max_retries=2)
        started = time.monotonic()
        result = client.structured(MESSAGES, Answer)
        assert len(server.requests) == 3
    assert time.monotonic() - started < 2.0
    assert not result.ok and "APIConnectionError" in result.error


def test_deeply_nested_json_is_an_invalid_reply_not_a_recursion_error(tmp_path: Path) -> None:
    nested = "[" * 100_000 + "]" * 100_000
    with ScriptedOpenAI(lambda m, r: '{"city": ' + nested + "}") as server:
        client = _client(server, Cache(tmp_path))
        result = client.structured(MESSAGES, Answer)
    assert not result.ok and "nested too deeply" in result.error
    assert _cached_texts(tmp_path) == []


def test_a_deeply_nested_http_body_is_a_reply_error() -> None:
    with ScriptedOpenAI() as server:
        server.inject(Fault(body="[" * 100_000 + "]" * 100_000))
        with pytest.raises(LLMReplyError, match="nested too deeply"):
            _client(server).complete(MESSAGES)


def test_two_servers_with_the_same_model_name_do_not_share_answers(tmp_path: Path) -> None:
    with ScriptedOpenAI(lambda m, r: "from A") as a, ScriptedOpenAI(lambda m, r: "from B") as b:
        assert _client(a, Cache(tmp_path)).complete(MESSAGES) == "from A"
        assert _client(b, Cache(tmp_path)).complete(MESSAGES) == "from B"
        assert len(b.requests) == 1


def test_the_prompt_version_is_part_of_the_key(tmp_path: Path) -> None:
    with ScriptedOpenAI(lambda m, r: "Paris.") as server:
        endpoint = Endpoint.from_env(base_url=server.base_url, model="m", api_key=KEY)
        LLMClient(endpoint, cache=Cache(tmp_path), prompt_version="v1").complete(MESSAGES)
        LLMClient(endpoint, cache=Cache(tmp_path), prompt_version="v1").complete(MESSAGES)
        LLMClient(endpoint, cache=Cache(tmp_path), prompt_version="v2").complete(MESSAGES)
        assert len(server.requests) == 2


def test_an_echoed_key_is_redacted_from_errors_and_reasons(tmp_path: Path) -> None:
    with ScriptedOpenAI() as server:
        server.inject(Fault(echo_auth=True), Fault(echo_auth=True))
        client = _client(server, Cache(tmp_path))
        result = client.structured(MESSAGES, Answer)
        with pytest.raises(Exception) as raised:
            client.complete(MESSAGES)
        assert server.headers[0]["Authorization"] == f"Bearer {KEY}"  # it was sent, and echoed
    assert not result.ok and "401" in result.error
    assert KEY not in result.error and "[REDACTED]" in result.error
    assert KEY not in str(raised.value) and KEY not in repr(raised.value.args)
    assert KEY not in str(getattr(raised.value, "body", "")) and "[REDACTED]" in str(raised.value)


def test_an_echoed_key_in_a_reply_is_never_returned_or_cached(tmp_path: Path) -> None:
    with ScriptedOpenAI(lambda m, r: f"Your key is {KEY}. " + GOOD) as server:
        client = _client(server, Cache(tmp_path))
        text = client.complete(MESSAGES)
        result = client.structured(MESSAGES, Answer)
    assert KEY not in text and "[REDACTED]" in text
    assert result.ok and KEY not in (result.raw or "")
    assert all(KEY not in p.read_text() for p in tmp_path.rglob("*.json"))


def test_a_trickled_status_line_and_headers_are_cut_at_the_deadline() -> None:
    """The head is read inside httpcore, whose timeouts are per read: 3 s for a 3 s deadline,
    not the ~12 s the server takes to send its head a byte at a time."""
    with ScriptedOpenAI(lambda m, r: GOOD) as server:
        server.inject(Fault(head_trickle=0.1))  # ~110 bytes of head at 10 bytes/s
        client = _client(server, timeout=5.0, max_retries=0, deadline=3.0)
        started = time.monotonic()
        result = client.structured(MESSAGES, Answer)
        elapsed = time.monotonic() - started
    assert elapsed < 4.0, elapsed
    assert not result.ok and "LLMDeadlineError" in result.error and "3 s deadline" in result.error
    assert result.calls == 1 and client.usage.failed_requests == 1  # sent, never answered


def test_endless_100_continue_is_cut_at_the_deadline() -> None:
    with ScriptedOpenAI(lambda m, r: "Paris.") as server:
        server.inject(Fault(continues=200, continue_gap=0.1))  # 20 s of interim responses
        client = _client(server, timeout=5.0, max_retries=2, deadline=2.0)
        started = time.monotonic()
        with pytest.raises(LLMDeadlineError, match="2 s deadline"):
            client.complete(MESSAGES)
        assert time.monotonic() - started < 3.0
        assert client.complete(MESSAGES) == "Paris."  # the next call is answered as usual
