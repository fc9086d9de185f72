"""Rerankers and generators, the LLM ones against a real loopback OpenAI-protocol server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cofe.llm import Endpoint, EndpointError
from cofe.pipeline import (
    CrossEncoderReranker,
    ExtractiveGenerator,
    LLMReranker,
    MiniLMReranker,
    OpenAIGenerator,
)
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


def test_llm_reranker_raises_on_a_reply_with_no_passage_number() -> None:
    with ScriptedOpenAI(lambda m, r: "I cannot decide.") as server:
        reranker = LLMReranker(Endpoint.from_env(base_url=server.base_url, model="m"), top_k=2)
        reranker.prepare(CANDIDATES, None)
        with pytest.raises(ValueError, match="names no passage number"):
            reranker("capital of France", CANDIDATES)


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
        with pytest.raises(InternalServerError):
            OpenAIGenerator(endpoint)("capital?", CANDIDATES)
        assert len(server.requests) == 2


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
