"""Where an OpenAI-compatible endpoint is and how to call it; the key never leaves memory."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any


class EndpointError(ValueError):
    """The endpoint is not configured well enough to call."""


@dataclass(frozen=True)
class Endpoint:
    """Base URL, model and key; flags win over ``OPENAI_BASE_URL`` / ``OPENAI_MODEL`` / ``OPENAI_API_KEY``.

    ``describe()`` (what goes into manifests and logs) never includes the key.
    """

    base_url: str | None
    model: str
    api_key: str = field(repr=False)
    timeout: float = 60.0
    max_retries: int = 3

    @classmethod
    def from_env(
        cls,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
    ) -> Endpoint:
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        model = model or os.environ.get("OPENAI_MODEL") or os.environ.get("COFE_MODEL")
        api_key = api_key or os.environ.get("OPENAI_API_KEY")
        if not model:
            raise EndpointError("no model: give --model or set OPENAI_MODEL")
        if not api_key:
            if base_url is None:
                raise EndpointError(
                    "no endpoint: give --base-url (a local server) or set OPENAI_API_KEY"
                )
            api_key = "none"  # local servers ignore the key, the client insists on one
        return cls(base_url, model, api_key, timeout, max_retries)

    def describe(self) -> dict[str, Any]:
        return {"base_url": self.base_url or "https://api.openai.com/v1", "model": self.model}

    def client(self):
        """One ``openai.OpenAI`` per endpoint, shared by every caller and thread (it is thread-safe).

        Only ``LLMClient`` calls it: every request goes through its cache and usage counts.
        """
        return _client_for(self)


@lru_cache(maxsize=32)
def _client_for(endpoint: Endpoint):
    from openai import OpenAI

    # the openai client retries 408/409/429/5xx and connection errors with
    # exponential backoff and honours Retry-After
    return OpenAI(
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        timeout=endpoint.timeout,
        max_retries=endpoint.max_retries,
    )
