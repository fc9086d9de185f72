"""Rerankers and generators, the LLM ones against a real loopback OpenAI-protocol server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cofe.llm import Endpoint, EndpointError, LLMClient
from cofe.pipeline import (
    Cache,
    CrossEncoderReranker,
    ExtractiveGenerator,
    LLMReranker,
    MiniLMReranker,
    OpenAIGenerator,
)
from cofe.pipeline._rerank import RerankFailed
from cofe.runlog import Chunk
from cofe.testing import Fault, ScriptedOpenAI

CANDIDATES = [
    Chunk(chunk_id="a", doc_id="d", text="The stock market fell after new tariffs."),
    Chunk(chunk_id="b", doc_id="d", text="Plants turn sunlight into chemical energy."),
    Chunk(chunk_id="c", doc_id="d", text="Paris is the capital of France. It is large."),
]


def test_minilm_reranker_puts_the_relevant_chunk_first_and_cuts_to_top_k() -> None:
    reranker = MiniLMReranker(top_k=2)
    reranker.prepare(CANDIDATES, None)
    ranked = reranker("How do leaves make food from light?", CANDIDATES)
    assert next(c.chunk_id for c, _ in ranked) == "b"
    assert len(ranked) == 2


@pytest.mark.slow
def test_cross_encoder_loads_from_a_local_folder(tmp_path: Path) -> None:
    from sentence_transformers import CrossEncoder

    from cofe.pipeline._embed import minilm_path

    folder = tmp_path / "ce"
    # a cross-encoder head on MiniLM (untrained): this checks the loading and ranking path
    CrossEncoder(minilm_path(), num_labels=1, device="cpu").save(str(folder))
    reranker = CrossEncoderReranker(str(folder), top_k=3)
    reranker.prepare(CANDIDATES, None)
    ranked = reranker("capital of France", CANDIDATES)
    assert sorted(c.chunk_id for c, _ in ranked) == ["a", "b", "c"]
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)


def test_cross_encoder_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        CrossEncoderReranker(str(tmp_path / "nope"), top_k=3)


def test_llm_reranker_follows_the_models_ranking() -> None:
    def reply(messages, request):
        assert "Question: capital of France" in messages[-1]["content"]
        return json.dumps({"ranking": [3, 1]})

    with ScriptedOpenAI(reply) as server:
        reranker = LLMReranker(Endpoint.from_env(base_url=server.base_url, model="m"), top_k=3)
        reranker.prepare(CANDIDATES, None)
        ranked = reranker("capital of France", CANDIDATES)
    # the passages the model names come first, the one it left out keeps its place after them
    assert [c.chunk_id for c, _ in ranked] == ["c", "a", "b"]


def test_llm_reranker_does_not_read_digits_in_prose_as_a_ranking() -> None:
    # one prose reply, then (asked to repair) a JSON ranking: only the JSON is used
    replies = iter(["I'd rate this 7 of 10 because 3 mentions France.", '{"ranking": [2]}'])
    with ScriptedOpenAI(lambda m, r: next(replies)) as server:
        reranker = LLMReranker(Endpoint.from_env(base_url=server.base_url, model="m"), top_k=3)
        ranked = reranker("capital of France", CANDIDATES)
        repair_turn = server.requests[1]["messages"][-1]["content"]
    assert [c.chunk_id for c, _ in ranked] == ["b", "a", "c"]
    assert "not valid" in repair_turn and "not JSON" in repair_turn
    assert reranker.usage.calls == 2 and reranker.usage.repairs == 1


def test_llm_reranker_repairs_passage_numbers_out_of_range_and_ignores_repeats() -> None:
    replies = iter(['{"ranking": [7, 1]}', '{"ranking": [3, 3, 1]}'])
    with ScriptedOpenAI(lambda m, r: next(replies)) as server:
        reranker = LLMReranker(Endpoint.from_env(base_url=server.base_url, model="m"), top_k=3)
        ranked = reranker("capital of France", CANDIDATES)
        repair_turn = server.requests[1]["messages"][-1]["content"]
    assert "ranking.0" in repair_turn and "less than or equal to 3" in repair_turn
    assert [c.chunk_id for c, _ in ranked] == ["c", "a", "b"]


def test_llm_reranker_without_a_valid_ranking_raises_with_the_reason() -> None:
    with ScriptedOpenAI(lambda m, r: "I'd rate this 7 of 10 because 3 is best.") as server:
        reranker = LLMReranker(Endpoint.from_env(base_url=server.base_url, model="m"), top_k=2)
        reranker.prepare(CANDIDATES, None)
        with pytest.raises(RerankFailed, match=r"no valid ranking.*after one repair.*not JSON"):
            reranker("capital of France", CANDIDATES)
        assert len(server.requests) == 2  # the call and its one repair
    assert reranker.usage.failures == 1


def test_llm_reranker_replies_are_cached_and_counted(tmp_path: Path) -> None:
    with ScriptedOpenAI(lambda m, r: '{"ranking": [3, 1, 2]}') as server:
        first = LLMReranker(Endpoint.from_env(base_url=server.base_url, model="m"), top_k=3)
        first.prepare(CANDIDATES, Cache(tmp_path))
        again = LLMReranker(Endpoint.from_env(base_url=server.base_url, model="m"), top_k=3)
        again.prepare(CANDIDATES, Cache(tmp_path))
        assert first("capital of France", CANDIDATES) == again("capital of France", CANDIDATES)
        assert len(server.requests) == 1
    assert first.usage.calls == 1 and first.usage.prompt_tokens > 0
    assert again.usage.calls == 0 and again.usage.cached == 1


def test_extractive_generator_is_named_as_such_and_answers_from_context() -> None:
    generator = ExtractiveGenerator()
    assert "not an LLM" in generator.name
    assert (
        generator("What is the capital of France?", CANDIDATES) == "Paris is the capital of France."
    )
    assert generator("anything", []) == ""


def test_openai_generator_sends_the_context_and_returns_the_reply() -> None:
    with ScriptedOpenAI(lambda m, r: "  Paris.  ") as server:
        endpoint = Endpoint.from_env(base_url=server.base_url, model="local-model")
        generator = OpenAIGenerator(endpoint)
        answer = generator("What is the capital of France?", CANDIDATES[2:])
        request = server.requests[-1]
    assert answer == "Paris."
    assert request["model"] == "local-model" and request["temperature"] == 0.0
    assert "[1] Paris is the capital of France." in request["messages"][-1]["content"]


def test_openai_generator_calls_go_through_the_llm_client_cache_and_usage(tmp_path: Path) -> None:
    with ScriptedOpenAI(lambda m, r: "Paris.") as server:
        endpoint = Endpoint.from_env(base_url=server.base_url, model="m")
        first, again = OpenAIGenerator(endpoint), OpenAIGenerator(endpoint)
        first.prepare(CANDIDATES, Cache(tmp_path))
        again.prepare(CANDIDATES, Cache(tmp_path))
        assert first("capital?", CANDIDATES) == again("capital?", CANDIDATES) == "Paris."
        assert "response_format" not in server.requests[0]  # a plain-text call
        assert len(server.requests) == 1  # the second answer came from the cache
        sent = " ".join(m["content"] for m in server.requests[0]["messages"])
    # the scripted server counts a token per word
    assert first.usage.to_dict() | {"seconds": 0} == {
        "calls": 1,
        "cached": 0,
        "repairs": 0,
        "failures": 0,
        "prompt_tokens": len(sent.split()),
        "completion_tokens": 1,
        "total_tokens": len(sent.split()) + 1,
        "seconds": 0,
    }
    assert first.usage.seconds > 0
    assert again.usage.calls == 0 and again.usage.cached == 1


def test_openai_generator_can_share_a_client_with_other_stages() -> None:
    with ScriptedOpenAI(
        lambda m, r: '{"ranking": [3]}' if "rank" in m[0]["content"] else "Paris."
    ) as server:
        client = LLMClient(Endpoint.from_env(base_url=server.base_url, model="m"), max_tokens=64)
        reranked = LLMReranker(client, top_k=1)("capital?", CANDIDATES)
        answer = OpenAIGenerator(client)("capital?", [c for c, _ in reranked])
        assert server.requests[1]["max_tokens"] == 64
    assert answer == "Paris." and client.usage.calls == 2


def test_openai_generator_retries_a_429_honouring_retry_after_and_a_500() -> None:
    with ScriptedOpenAI(lambda m, r: "Paris.") as server:
        server.inject(Fault(status=429, headers={"Retry-After": "0.2"}), Fault(status=500))
        endpoint = Endpoint.from_env(base_url=server.base_url, model="m")
        assert OpenAIGenerator(endpoint)("capital?", CANDIDATES) == "Paris."
        assert len(server.requests) == 3


def test_openai_generator_gives_up_after_the_retries() -> None:
    from openai import InternalServerError

    with ScriptedOpenAI() as server:
        server.inject(*[Fault(status=500)] * 5)
        endpoint = Endpoint.from_env(base_url=server.base_url, model="m", max_retries=1)
        generator = OpenAIGenerator(endpoint)
        with pytest.raises(InternalServerError):
            generator("capital?", CANDIDATES)
        assert len(server.requests) == 2
    assert generator.usage.failures == 1 and generator.usage.calls == 0


def test_endpoint_settings_come_from_flags_or_environment_and_hide_the_key(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    endpoint = Endpoint.from_env()
    assert (endpoint.base_url, endpoint.model) == ("http://127.0.0.1:9/v1", "env-model")
    assert Endpoint.from_env(model="flag-model").model == "flag-model"
    assert "sk-secret" not in repr(endpoint) and "sk-secret" not in json.dumps(endpoint.describe())
    monkeypatch.delenv("OPENAI_MODEL")
    with pytest.raises(EndpointError, match="no model"):
        Endpoint.from_env()
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(EndpointError, match="no endpoint"):
        Endpoint.from_env(model="m")
