"""OpenAI-compatible endpoints (hosted, vLLM, llama.cpp server, Ollama) and structured calls.

Names load on first use: the ``cofe`` command names the endpoint's errors and the judge's
settings without loading the client (scoring a run never calls a model).
"""

from typing import TYPE_CHECKING

from cofe._lazy import lazy_names

if TYPE_CHECKING:
    from cofe._errors import EndpointError  # the endpoint kind of cofe's errors
    from cofe.llm._client import (
        LLMClient,
        LLMDeadlineError,
        LLMReplyError,
        Structured,
        Usage,
        estimate_tokens,
        extract_json,
    )
    from cofe.llm._endpoint import (
        JSON_MODES,
        Endpoint,
        EndpointDown,
        EndpointUnreachable,
        redact,
    )
    from cofe.llm._serve import MODEL_ID as LOCAL_MODEL_ID
    from cofe.llm._serve import ServeError, local_model_file
    from cofe.llm._serve import server as local_server

_CLIENT = (
    "LLMClient",
    "LLMDeadlineError",
    "LLMReplyError",
    "Structured",
    "Usage",
    "estimate_tokens",
    "extract_json",
)
_ENDPOINT = (
    "JSON_MODES",
    "Endpoint",
    "EndpointDown",
    "EndpointUnreachable",
    "redact",
)
_HOMES = {
    **dict.fromkeys(_CLIENT, "cofe.llm._client"),
    **dict.fromkeys(_ENDPOINT, "cofe.llm._endpoint"),
    **dict.fromkeys(("ServeError", "local_model_file"), "cofe.llm._serve"),
    "EndpointError": "cofe._errors",
    "LOCAL_MODEL_ID": "cofe.llm._serve:MODEL_ID",
    "local_server": "cofe.llm._serve:server",
}

__all__ = [
    "JSON_MODES",
    "LOCAL_MODEL_ID",
    "Endpoint",
    "EndpointDown",
    "EndpointError",
    "EndpointUnreachable",
    "LLMClient",
    "LLMDeadlineError",
    "LLMReplyError",
    "ServeError",
    "Structured",
    "Usage",
    "estimate_tokens",
    "extract_json",
    "local_model_file",
    "local_server",
    "redact",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
