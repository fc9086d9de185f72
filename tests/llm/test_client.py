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
    return LLMClient(Endpoint.from_env(base_url=server.base_url, model="m", api_key="k", **kw),
                     cache=cache)  # fmt: skip


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
        client = LLMClient(Endpoint.from_env(base_url=server.base_url, model="m", api_key="k"),
                           json_mode=mode)  # fmt: skip
        assert client.structured(MESSAGES, Answer).ok
        sent = server.requests[0]["response_format"]
    assert sent["type"] == mode
    schema = sent["schema"] if mode == "json_object" else sent["json_schema"]["schema"]
    assert set(schema["properties"]) == {"city", "year"}
    with pytest.raises(ValueError, match="json_mode must be one of"):
        LLMClient(client.endpoint, json_mode="yaml")
