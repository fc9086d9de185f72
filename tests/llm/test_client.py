"""Structured calls: validation, one repair, failure with a reason, cache, accounting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from cofe._cache import Cache
from cofe.llm import Endpoint, LLMClient, extract_json
from cofe.testing import Fault, ScriptedOpenAI


class Answer(BaseModel):
    city: str
    year: int


def _client(server, cache=None, **kw) -> LLMClient:
    return LLMClient(
        Endpoint.from_env(base_url=server.base_url, model="m", api_key="k", **kw), cache=cache
    )


MESSAGES = [{"role": "user", "content": "When and where? JSON please."}]


def test_valid_reply_in_a_code_fence_is_validated() -> None:
    with ScriptedOpenAI(lambda m, r: '```json\n{"city": "Paris", "year": 1889}\n```') as server:
        result = _client(server).structured(MESSAGES, Answer)
    assert result.ok and result.value == Answer(city="Paris", year=1889) and result.calls == 1


def test_an_invalid_reply_gets_one_repair_call_with_the_error() -> None:
    replies = iter(['{"city": "Paris", "year": "soon"}', '{"city": "Paris", "year": 1889}'])
    with ScriptedOpenAI(lambda m, r: next(replies)) as server:
        client = _client(server)
        result = client.structured(MESSAGES, Answer)
        repair_turn = server.requests[1]["messages"][-1]["content"]
    assert result.ok and result.calls == 2 and client.usage.repairs == 1
    assert "year" in repair_turn and "not valid" in repair_turn


def test_invalid_twice_is_a_failure_with_a_reason_not_an_exception() -> None:
    with ScriptedOpenAI(lambda m, r: "I'd rather not.") as server:
        client = _client(server)
        result = client.structured(MESSAGES, Answer)
    assert not result.ok and "after one repair" in result.error and "not JSON" in result.error
    assert client.usage.failures == 1 and client.usage.calls == 2


def test_transport_failure_after_retries_is_a_failure_with_a_reason() -> None:
    with ScriptedOpenAI() as server:
        server.inject(*[Fault(status=503)] * 3)
        result = _client(server, max_retries=2).structured(MESSAGES, Answer)
        assert len(server.requests) == 3
    assert (not result.ok and "InternalServerError" in result.error) or "503" in result.error


def test_a_rerun_costs_no_calls_thanks_to_the_cache(tmp_path: Path) -> None:
    reply = json.dumps({"city": "Paris", "year": 1889})
    with ScriptedOpenAI(lambda m, r: reply) as server:
        first = _client(server, cache=Cache(tmp_path))
        first.structured(MESSAGES, Answer)
        second = _client(server, cache=Cache(tmp_path))
        result = second.structured(MESSAGES, Answer)
        assert len(server.requests) == 1
    assert result.ok and second.usage.calls == 0 and second.usage.cached == 1
    assert first.usage.prompt_tokens > 0 and first.usage.completion_tokens > 0
    assert "k" not in {p.name for p in tmp_path.rglob("*")}  # the key is no file name...
    assert all('"k"' not in p.read_text() for p in tmp_path.rglob("*.json"))  # ...nor content


def test_extract_json_finds_the_object_in_prose() -> None:
    assert extract_json('Here you go: {"a": 1} hope it helps') == {"a": 1}
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json("nothing here")


@pytest.mark.parametrize("mode", ["json_object", "json_schema"])
def test_json_modes_send_a_response_format_with_the_schema(mode: str) -> None:
    with ScriptedOpenAI(lambda m, r: '{"city": "Paris", "year": 1889}') as server:
        client = LLMClient(
            Endpoint.from_env(base_url=server.base_url, model="m", api_key="k"), json_mode=mode
        )
        assert client.structured(MESSAGES, Answer).ok
        sent = server.requests[0]["response_format"]
    assert sent["type"] == mode
    schema = sent["schema"] if mode == "json_object" else sent["json_schema"]["schema"]
    assert set(schema["properties"]) == {"city", "year"}
    with pytest.raises(ValueError, match="json_mode must be one of"):
        LLMClient(client.endpoint, json_mode="yaml")


def test_complete_is_a_plain_text_call_cached_and_counted(tmp_path: Path) -> None:
    with ScriptedOpenAI(lambda m, r: " Paris. ") as server:
        client = LLMClient(
            Endpoint.from_env(base_url=server.base_url, model="m", api_key="k"),
            cache=Cache(tmp_path),
            json_mode="json_object",
            max_tokens=32,
        )
        assert client.complete(MESSAGES) == " Paris. "
        again = LLMClient(
            client.endpoint, cache=Cache(tmp_path), json_mode="json_object", max_tokens=32
        )
        assert again.complete(MESSAGES) == " Paris. "
        assert len(server.requests) == 1
        sent = server.requests[0]
    assert "response_format" not in sent and sent["max_tokens"] == 32  # no JSON mode for text
    assert client.usage.calls == 1 and client.usage.completion_tokens == 1
    assert again.usage.calls == 0 and again.usage.cached == 1


def test_complete_raises_after_the_retries_and_counts_a_failure() -> None:
    from openai import InternalServerError

    with ScriptedOpenAI() as server:
        server.inject(*[Fault(status=500)] * 3)
        client = _client(server, max_retries=1)
        with pytest.raises(InternalServerError):
            client.complete(MESSAGES)
        assert len(server.requests) == 2
    assert client.usage.failures == 1 and client.usage.calls == 0


def test_a_reply_with_no_choices_is_an_error_and_is_not_cached(tmp_path: Path) -> None:
    empty = json.dumps(
        {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
    )
    with ScriptedOpenAI(lambda m, r: "Paris.") as server:
        server.inject(Fault(body=empty))
        client = _client(server, cache=Cache(tmp_path))
        with pytest.raises(RuntimeError, match="no choices"):
            client.complete(MESSAGES)
        assert client.complete(MESSAGES) == "Paris."  # asked again, not read from the cache
        assert len(server.requests) == 2
    assert client.usage.calls == 2 and client.usage.failures == 1


def test_use_cache_adopts_a_run_cache_only_when_the_client_has_none(tmp_path: Path) -> None:
    with ScriptedOpenAI() as server:
        own, bare = _client(server, cache=Cache(tmp_path / "own")), _client(server)
    own.use_cache(Cache(tmp_path / "run"))
    bare.use_cache(Cache(tmp_path / "run"))
    bare.use_cache(None)
    assert own.cache.root == tmp_path / "own" and bare.cache.root == tmp_path / "run"
