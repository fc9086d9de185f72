"""OpenAI-compatible endpoints (hosted, vLLM, llama.cpp server, Ollama)."""

from cofe.llm._endpoint import Endpoint, EndpointError

__all__ = ["Endpoint", "EndpointError"]
