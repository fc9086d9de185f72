"""Issue 10, item 19: probing an endpoint fails in seconds with the URL and the error."""

from __future__ import annotations

import socket
import time

import pytest

from cofe.llm import Endpoint, EndpointError, LLMClient
from cofe.testing import ScriptedOpenAI


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_served_model_passes_and_costs_no_chat_call() -> None:
    with ScriptedOpenAI(models=["m"], api_key="key-12345678") as server:
        endpoint = Endpoint.from_env(base_url=server.base_url, model="m", api_key="key-12345678")
        LLMClient(endpoint).probe()
        assert server.requests == []  # /models answered: no chat call was spent


def test_connection_refused_names_the_url_within_seconds() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    started = time.monotonic()
    with pytest.raises(EndpointError) as raised:
        Endpoint.from_env(base_url=url, model="m", api_key="k").probe(timeout=2)
    assert time.monotonic() - started < 3
    message = str(raised.value)
    assert url in message and "\n" not in message
    assert "APIConnectionError" in message and "refused" in message.lower()


def test_a_wrong_key_is_a_401_with_the_url_and_no_key() -> None:
    with ScriptedOpenAI(models=["m"], api_key="the-right-key") as server:
        wrong = "sk-wrong-key-0123456789"
        with pytest.raises(EndpointError) as raised:
            Endpoint.from_env(base_url=server.base_url, model="m", api_key=wrong).probe()
        url = server.base_url
    message = str(raised.value)
    assert url in message and "401" in message and "unauthorized" in message
    assert wrong not in message


def test_an_unknown_model_is_named_with_what_the_server_serves() -> None:
    pattern = r"model 'gpt-9' is not served.*llama-3, qwen"
    with (
        ScriptedOpenAI(models=["llama-3", "qwen"]) as server,
        pytest.raises(EndpointError, match=pattern),
    ):
        Endpoint.from_env(base_url=server.base_url, model="gpt-9", api_key="k").probe()


def test_without_a_model_list_a_one_token_call_probes(monkeypatch) -> None:
    with ScriptedOpenAI(models=["m"]) as server:
        endpoint = Endpoint.from_env(base_url=server.base_url, model="other", api_key="k")
        # a server with no /models route: the probe falls back to a chat call
        import openai

        def no_list(*a, **k):
            raise openai.NotFoundError(
                "no route", response=_response(404), body={"message": "no route"}
            )

        monkeypatch.setattr("openai.resources.models.Models.list", no_list)
        with pytest.raises(EndpointError, match=r"404.*'other' does not exist"):
            endpoint.probe()
        assert len(server.requests) == 1 and server.requests[0]["max_tokens"] == 1
        Endpoint.from_env(base_url=server.base_url, model="m", api_key="k").probe()


def _response(status: int):
    import httpx

    return httpx.Response(status, request=httpx.Request("GET", "http://127.0.0.1/v1/models"))
