"""A storm of errors is an endpoint down (issue 45, item 17): 500 after 500, a refused key
(401) or a rate limit (429) left every sample unscored with exit 0; a dead endpoint ends
the pass with exit 1 and one line, and so do these now."""

from __future__ import annotations

import pytest

from cofe.llm import Endpoint, EndpointDown, LLMClient
from cofe.testing import Fault, ScriptedOpenAI

MESSAGES = [{"role": "user", "content": "Where?"}]


def _fail_five(status: int) -> LLMClient:
    with ScriptedOpenAI(lambda m, r: "Paris.") as server:
        server.standing = Fault(status=status, headers={"Retry-After": "0"})
        client = LLMClient(
            Endpoint.from_env(
                base_url=server.base_url, model="m", api_key="k", timeout=2.0, max_retries=1
            )
        )
        for _ in range(client.down_after):
            with pytest.raises(Exception):  # noqa: B017 -- openai's status error of each kind
                client.complete(MESSAGES)
    return client


@pytest.mark.parametrize("status", [500, 501, 401, 403, 429])
def test_a_storm_of_errors_is_the_endpoint_down(status: int) -> None:
    client = _fail_five(status)
    reason = client.endpoint_down()
    assert reason is not None and str(status) in reason
    with pytest.raises(EndpointDown):
        client.check_endpoint()
    assert client.last_call_unreachable()  # its item is asked again on the next pass


@pytest.mark.parametrize("status", [400, 404, 422])
def test_a_request_the_endpoint_refuses_is_not_the_endpoint_down(status: int) -> None:
    assert _fail_five(status).endpoint_down() is None
