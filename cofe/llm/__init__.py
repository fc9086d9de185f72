"""OpenAI-compatible endpoints (hosted, vLLM, llama.cpp server, Ollama) and structured calls."""

from cofe.llm._client import (
    LLMClient,
    LLMDeadlineError,
    LLMReplyError,
    Structured,
    Usage,
    estimate_tokens,
    extract_json,
)
from cofe.llm._endpoint import Endpoint, EndpointError, EndpointUnreachable, redact

__all__ = [
    "Endpoint",
    "EndpointError",
    "EndpointUnreachable",
    "LLMClient",
    "LLMDeadlineError",
    "LLMReplyError",
    "Structured",
    "Usage",
    "estimate_tokens",
    "extract_json",
    "redact",
]
