"""OpenAI-compatible endpoints (hosted, vLLM, llama.cpp server, Ollama) and structured calls."""

from cofe.llm._client import (
    JSON_MODES,
    LLMClient,
    LLMDeadlineError,
    LLMReplyError,
    Structured,
    Usage,
    estimate_tokens,
    extract_json,
)
from cofe.llm._endpoint import (
    Endpoint,
    EndpointDown,
    EndpointError,
    EndpointUnreachable,
    redact,
)
from cofe.llm._serve import MODEL_ID as LOCAL_MODEL_ID
from cofe.llm._serve import ServeError, local_model_file
from cofe.llm._serve import server as local_server

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
