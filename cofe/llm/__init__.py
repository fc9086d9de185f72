"""OpenAI-compatible endpoints (hosted, vLLM, llama.cpp server, Ollama) and structured calls."""

from cofe.llm._client import LLMClient, Structured, Usage, estimate_tokens, extract_json
from cofe.llm._endpoint import Endpoint, EndpointError

__all__ = [
    "Endpoint",
    "EndpointError",
    "LLMClient",
    "Structured",
    "Usage",
    "estimate_tokens",
    "extract_json",
]
