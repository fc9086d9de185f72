"""Every call cofe makes to an OpenAI-compatible endpoint: cached, counted, retried.

``LLMClient.structured(messages, Model)`` asks for JSON, validates it with
pydantic and, if the reply is not valid, asks once more with the validation
error (the *repair* call). If that fails too the call returns a failure with
the reason; it never raises for a bad reply, so one item never stops a
batch. ``LLMClient.complete(messages)`` is the plain-text call (a generator's
answer); it raises when the endpoint cannot be reached, so the caller's
stage records the error.

Both go through one ``_chat``: transport errors (429/5xx/timeouts) are
retried by the ``openai`` client with exponential backoff honouring
``Retry-After``; replies are cached on disk keyed by (model, messages,
params), so a re-run costs no calls; ``usage`` counts calls, cache hits,
repairs, failures, tokens and seconds. The API key is never part of a key, a
log line or a file.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from cofe._cache import Cache, content_key
from cofe.llm._endpoint import Endpoint

T = TypeVar("T", bound=BaseModel)
# off: plain chat (works everywhere); json_object / json_schema: the endpoint constrains the reply
JSON_MODES = ("off", "json_object", "json_schema")
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.S)


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` by cl100k (shipped with llama-index), else ~4 characters a token."""
    encode = _encoder()
    return len(encode(text)) if encode else max(1, len(text) // 4)


_ENCODER: Any = None
_ENCODER_LOCK = threading.Lock()


def _encoder():
    global _ENCODER
    with _ENCODER_LOCK:
        if _ENCODER is None:
            try:
                from llama_index.core.utils import get_tokenizer

                _ENCODER = get_tokenizer()  # tiktoken cl100k, shipped with llama-index
            except Exception:  # no llama-index: fall back to the estimate
                _ENCODER = False
    return _ENCODER or None


def extract_json(text: str) -> Any:
    """The JSON object in a reply, tolerating code fences and prose around it."""
    text = _FENCE.sub("", text.strip())
    try:
        return json.loads(text)
    except ValueError:
        pass
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the reply holds no JSON object")
    return json.loads(text[start : end + 1])


@dataclass
class Usage:
    """Calls and tokens, counted across threads."""

    calls: int = 0
    cached: int = 0
    repairs: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: float) -> None:
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, float]:
        return {
            "calls": self.calls,
            "cached": self.cached,
            "repairs": self.repairs,
            "failures": self.failures,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class Structured(Generic[T]):
    """A validated reply, or the reason there is none."""

    value: T | None
    error: str | None = None
    calls: int = 0  # calls made for this item (0 when cached)
    raw: str | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None


class LLMClient:
    """One endpoint, one cache, one usage counter; safe to share between threads."""

    def __init__(self, endpoint: Endpoint, *, cache: Cache | None = None, max_tokens: int = 1500,
                 temperature: float = 0.0, json_mode: str = "off") -> None:  # fmt: skip
        if json_mode not in JSON_MODES:
            raise ValueError(f"json_mode must be one of {', '.join(JSON_MODES)}, not {json_mode!r}")
        self.json_mode = json_mode
        self.endpoint = endpoint
        self.cache = cache or Cache(None)
        self.max_tokens, self.temperature = max_tokens, temperature
        self.usage = Usage()

    def use_cache(self, cache: Cache | None) -> None:
        """Cache replies in ``cache`` (a pipeline's run cache) unless this client has its own."""
        if cache is not None and self.cache.root is None:
            self.cache = cache

    def _params(self, model: type[BaseModel] | None) -> dict[str, Any]:
        """Call parameters; ``model=None`` is a plain-text call (no response format)."""
        params: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if model is None:
            return params
        if self.json_mode == "json_object":
            # llama.cpp's server turns this schema into a grammar
            params["response_format"] = {"type": "json_object", "schema": model.model_json_schema()}
        elif self.json_mode == "json_schema":
            params["response_format"] = {"type": "json_schema", "json_schema": {
                "name": model.__name__, "schema": model.model_json_schema()}}  # fmt: skip
        return params

    def _chat(self, messages: list[dict[str, str]], model: type[BaseModel] | None = None) -> str:
        """The one place a request is sent: cache lookup, the call (retried by ``openai``), usage."""
        params = self._params(model)
        key = content_key("chat-1", self.endpoint.model, messages, params)
        stored = self.cache.get_json("llm", key)
        if stored is not None:
            self.usage.add(cached=1)
            return stored["text"]
        started = time.perf_counter()
        reply = self.endpoint.client().chat.completions.create(
            model=self.endpoint.model, messages=messages, **params
        )
        if not reply.choices:  # an error, not an empty answer: never cached
            self.usage.add(calls=1, seconds=time.perf_counter() - started)
            raise RuntimeError("the endpoint returned no choices")
        text = reply.choices[0].message.content or ""
        usage = reply.usage
        self.usage.add(
            calls=1,
            seconds=time.perf_counter() - started,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        )
        self.cache.put_json("llm", key, {"text": text})
        return text

    def complete(self, messages: list[dict[str, str]]) -> str:
        """The reply's text (cached and counted like ``structured``).

        Raises the transport error once the ``openai`` client's retries run
        out (counted as a failure): a plain-text reply has nothing to repair,
        and the caller's stage records the error for its sample.
        """
        try:
            return self._chat(messages)
        except Exception:
            self.usage.add(failures=1)
            raise

    def structured(self, messages: list[dict[str, str]], model: type[T]) -> Structured[T]:
        """A reply validated as ``model``; one repair call on invalid JSON, then a failure."""
        calls_before = self.usage.calls
        try:
            raw = self._chat(messages, model)
        except Exception as error:  # transport errors after the client's own retries
            self.usage.add(failures=1)
            return Structured(None, f"call failed: {type(error).__name__}: {error}"[:500],
                              self.usage.calls - calls_before)  # fmt: skip
        problem = _validate(raw, model)
        if isinstance(problem, BaseModel):
            return Structured(problem, None, self.usage.calls - calls_before, raw)
        repair = [
            *messages,
            {"role": "assistant", "content": raw},
            {"role": "user", "content": "Your reply was not valid: " + problem
             + "\nReply again with only the corrected JSON object."},
        ]  # fmt: skip
        self.usage.add(repairs=1)
        try:
            raw2 = self._chat(repair, model)
        except Exception as error:
            self.usage.add(failures=1)
            return Structured(None, f"repair call failed: {type(error).__name__}: {error}"[:500],
                              self.usage.calls - calls_before, raw)  # fmt: skip
        second = _validate(raw2, model)
        if isinstance(second, BaseModel):
            return Structured(second, None, self.usage.calls - calls_before, raw2)
        self.usage.add(failures=1)
        return Structured(None, f"invalid reply after one repair: {second}"[:500],
                          self.usage.calls - calls_before, raw2)  # fmt: skip


def _validate(raw: str, model: type[T]) -> T | str:
    try:
        data = extract_json(raw)
    except ValueError as error:
        return f"not JSON ({error})"
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        return f"{where}: {first['msg']}"
