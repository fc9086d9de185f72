"""Every call cofe makes to an OpenAI-compatible endpoint: cached, counted, retried, bounded.

``LLMClient.structured(messages, Model)`` asks for JSON, validates it with
pydantic and, if the reply is not valid, asks once more with the validation
error (the *repair* call). If that fails too the call returns a failure with
the reason; it never raises for a bad reply, so one item never stops a
batch. ``LLMClient.complete(messages)`` is the plain-text call (a generator's
answer); it raises when the endpoint cannot be reached or its reply is not
usable, so the caller's stage records the error.

Both go through one ``_call``: connection errors (a reset, a refused
connection), timeouts, 408/409/429 and 5xx are retried with exponential
back-off, honouring ``Retry-After`` up to ``Endpoint.max_retry_after``; one
total deadline covers every attempt and wait, and every socket wait of an
exchange -- connect, the status line and headers (trickled, or ``100
Continue`` after ``100 Continue``), the body -- is bounded by the time left
(``_deadline``); a reply body is read with a byte cap and the deadline checked
as bytes arrive (a server that trickles a byte a second is cut at the
deadline). Calls in a row that cannot reach the endpoint at all (refused,
dropped, any 5xx, a 401/403 key refusal, a 429 rate limit, after retries) mark it down: ``check_endpoint`` lets a pass stop with
``EndpointDown`` instead of failing item after item. Only *validated* replies are cached,
keyed on (base URL, model, prompt version, messages, params), so a re-run
costs no calls and a bad reply is never served again. ``usage`` counts calls,
cache hits, repairs, failures, tokens and seconds. The API key is never part
of a key, and is redacted from every error, reason and cached text.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

from pydantic import BaseModel, ValidationError

from cofe._cache import Cache, content_key
from cofe._errors import ConfigurationError, EndpointError
from cofe.llm._deadline import until
from cofe.llm._endpoint import JSON_MODES, Endpoint, EndpointDown

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.S)


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` by cl100k (shipped with llama-index), else ~4 characters a token."""
    encode = _encoder()
    return len(encode(text)) if encode else max(1, len(text) // 4)


# the tokenizer; False once its import failed (None: not tried yet)
_ENCODER: Callable[[str], list[int]] | Literal[False] | None = None
_ENCODER_LOCK = threading.Lock()


def _encoder() -> Callable[[str], list[int]] | None:
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
    """The JSON object in a reply, tolerating code fences and prose around it.

    Raises ``ValueError`` for anything unreadable, including JSON nested too
    deeply to parse (which would otherwise be a ``RecursionError``).
    """
    text = _FENCE.sub("", text.strip())
    try:
        return json.loads(text)
    except ValueError:
        pass
    except RecursionError:
        raise ValueError("the reply's JSON is nested too deeply") from None
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the reply holds no JSON object")
    try:
        return json.loads(text[start : end + 1])
    except RecursionError:
        raise ValueError("the reply's JSON is nested too deeply") from None


class LLMReplyError(EndpointError, RuntimeError):
    """The endpoint answered, but not with a usable reply (not JSON, no choices, too large).
    A failure of the endpoint (exit code 1); still a ``RuntimeError``, as it was."""

    exit_code = 1


class LLMDeadlineError(LLMReplyError):
    """No complete reply within the call's total deadline (a slow or trickling server)."""


# statuses worth asking again; others (400, 401, 404, 422) will fail the same way
_RETRY_STATUS = frozenset({408, 409, 429})
# statuses of an endpoint that is not there (a gateway with nothing behind it)
_DOWN = frozenset({401, 403, 429})  # and every 5xx: a key refused, a rate limit, a storm of
# 500s leave every item unanswered as surely as a dead server (each after its retries)
DOWN_AFTER = 5  # calls in a row that cannot reach the endpoint: it is down


@dataclass
class Usage:
    """Calls and tokens, counted across threads. ``calls``: requests answered (a reply came,
    usable or not); ``failed_requests``: requests that got none -- refused or dropped,
    timed out, an error status, cut at the deadline or the size cap (each retry counts)."""

    calls: int = 0
    failed_requests: int = 0
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
        failed = {"failed_requests": self.failed_requests} if self.failed_requests else {}
        return {
            "calls": self.calls,
            **failed,  # only when there were any: a clean run's figures stay as they were
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
    calls: int = 0  # requests sent for this item, answered or not (0 when cached)
    raw: str | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None


class LLMClient:
    """One endpoint, one cache, one usage counter; safe to share between threads."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        cache: Cache | None = None,
        max_tokens: int = 1500,
        temperature: float = 0.0,
        json_mode: str = "off",
        prompt_version: str = "",
    ) -> None:
        if json_mode not in JSON_MODES:
            raise ConfigurationError(
                f"json_mode must be one of {', '.join(JSON_MODES)}, not {json_mode!r}"
            )
        self.json_mode = json_mode
        self.endpoint = endpoint
        self.cache = cache or Cache(None)
        self.max_tokens, self.temperature = max_tokens, temperature
        self.usage = Usage()
        self.prompt_version = prompt_version  # part of every cache key: bump it to re-ask
        self._this_thread = threading.local()  # calls made by the calling thread (per item)
        self.down_after = DOWN_AFTER
        self._health_lock = threading.Lock()
        self._failing = 0  # calls in a row that could not reach the endpoint
        self._last_failure: str | None = None

    def _thread_calls(self) -> int:
        """Calls made so far by this thread: an item's count must not take in other threads'."""
        return getattr(self._this_thread, "calls", 0)

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
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": model.__name__, "schema": model.model_json_schema()},
            }
        return params

    def _key(self, messages: list[dict[str, str]], params: dict[str, Any]) -> str:
        # the base URL is part of the key: two servers serving "the same" model
        # name are different models as far as their answers go
        url = self.endpoint.url.rstrip("/")
        return content_key(
            "chat-2", url, self.endpoint.model, self.prompt_version, messages, params
        )

    def _cached(self, key: str) -> str | None:
        stored = self.cache.get_json("llm", key)
        text = stored.get("text") if isinstance(stored, dict) else None
        if isinstance(text, str):
            self.usage.add(cached=1)
            return text
        return None

    def _store(self, key: str, text: str) -> None:
        """Cache a reply the caller has validated (never a bad one: it would be served again)."""
        self.cache.put_json("llm", key, {"text": self.endpoint.redact(text)})

    def _call(self, messages: list[dict[str, str]], params: dict[str, Any]) -> str:
        """One request with retries, all inside ``Endpoint.total_deadline``; no cache.

        The deadline bounds every socket wait of every attempt (``_deadline.until``): a
        status line and headers trickled a byte at a time, or ``100 Continue`` after
        ``100 Continue``, end at it as a trickled body does."""
        import httpx  # with openai: the pipeline extra (cofe's core needs neither)
        import openai

        endpoint = self.endpoint
        deadline_at = time.monotonic() + endpoint.total_deadline
        attempt = 0
        while True:
            try:
                with until(deadline_at):
                    text = self._attempt(messages, params, deadline_at)
            except (
                openai.APIConnectionError,
                openai.APIStatusError,
                httpx.TimeoutException,
            ) as error:
                timed_out = isinstance(error, openai.APITimeoutError | httpx.TimeoutException)
                if timed_out and time.monotonic() >= deadline_at:
                    raise LLMDeadlineError(
                        f"no complete reply within the {endpoint.total_deadline:g} s deadline "
                        f"({type(error).__name__} in attempt {attempt + 1})"
                    ) from None
                retryable = isinstance(error, openai.APIConnectionError) or (
                    isinstance(error, openai.APIStatusError)
                    and (error.status_code in _RETRY_STATUS or error.status_code >= 500)
                )
                wait = self._wait(error, attempt) if retryable else None
                if (
                    wait is None
                    or attempt >= endpoint.max_retries
                    or time.monotonic() + wait >= deadline_at
                ):
                    self._health(error)
                    raise
                time.sleep(wait)
                attempt += 1
            except LLMReplyError as error:  # the endpoint answered, if not usefully
                self._health(error)
                raise
            else:
                self._health(None)
                return text

    def _health(self, error: Exception | None) -> None:
        """Count calls in a row that could not reach the endpoint (after their retries): a
        refused or dropped connection, a 5xx, a 401/403 (the key refused) or a 429 (rate
        limited). Any other answer starts the count again; a timeout says nothing either way
        (a slow model is not a dead one)."""
        import openai

        unreachable = (
            isinstance(error, openai.APIConnectionError)
            and not isinstance(error, openai.APITimeoutError)
        ) or (
            isinstance(error, openai.APIStatusError)
            and (error.status_code in _DOWN or error.status_code >= 500)
        )
        self._this_thread.unreachable = unreachable
        self._this_thread.failure = None
        with self._health_lock:
            if unreachable:
                self._failing += 1
                self._last_failure = self.endpoint.redact(f"{type(error).__name__}: {error}")[:300]
                self._this_thread.failure = self._last_failure
            elif error is None or isinstance(error, LLMReplyError | openai.APIStatusError):
                self._failing, self._last_failure = 0, None

    def last_call_unreachable(self) -> bool:
        """Did this thread's last call fail because the endpoint could not be reached (a
        refused or dropped connection, a 5xx, 401, 403 or 429, after the retries)? Its item is worth
        asking again once the endpoint is back, unlike one the endpoint answered badly."""
        return getattr(self._this_thread, "unreachable", False)

    def last_failure(self) -> str | None:
        """What this thread's last call said when it could not reach the endpoint
        (redacted); None when it did reach it."""
        return getattr(self._this_thread, "failure", None)

    def count_elsewhere(self, unreachable: bool, failure: str | None) -> None:
        """Count an item judged by another client to the same endpoint (a Dask worker's)
        toward this client's health, as ``_health`` counts this client's own calls: an item
        that could not reach the endpoint adds one; any other starts the count again."""
        with self._health_lock:
            if unreachable:
                self._failing += 1
                self._last_failure = failure
            else:
                self._failing, self._last_failure = 0, None

    def endpoint_down(self, at_least: int | None = None) -> str | None:
        """Why the endpoint looks dead -- ``down_after`` (or ``at_least``) calls in a row
        failed to reach it, each after its retries -- or None. At the end of a pass,
        ``at_least=1`` asks whether it ended with the endpoint unreachable: the items its last
        calls were for are left undone, however few they were."""
        with self._health_lock:
            if self._failing < (self.down_after if at_least is None else at_least):
                return None
            return (
                f"endpoint {self.endpoint.url} is not answering: {self._failing} calls in "
                f"a row failed after their retries (last: {self._last_failure})"
            )

    def check_endpoint(self, kept: str = "", at_least: int | None = None) -> None:
        """Raise ``EndpointDown`` (one line: the cause, then ``kept``, what the caller keeps)
        when ``endpoint_down`` says the endpoint is dead: a pass stops instead of recording
        every remaining item as failed (and, checked with ``at_least=1`` at its end, a pass
        whose last items could not reach it exits non-zero, however few they were)."""
        reason = self.endpoint_down(at_least)
        if reason is not None:
            raise EndpointDown(f"{reason}; {kept}" if kept else reason)

    def _wait(self, error: Exception, attempt: int) -> float | None:
        """Seconds before the next attempt: ``Retry-After`` (bounded) or jittered back-off.

        ``None`` when the server asks for a longer wait than ``max_retry_after``.
        """
        response = getattr(error, "response", None)
        headers = response.headers if response is not None else {}
        asked = _retry_after(headers)
        if asked is not None:
            return asked if asked <= self.endpoint.max_retry_after else None
        return min(0.25 * 2.0**attempt, 8.0) * (0.75 + random.random() / 2)

    def _attempt(
        self, messages: list[dict[str, str]], params: dict[str, Any], deadline_at: float
    ) -> str:
        """One HTTP request read under the byte cap and the deadline.

        The real ``openai`` client sends it (auth, headers, status errors as
        typed exceptions); its streaming-response mode hands us the body to
        read chunk by chunk, which is where the byte cap and the total
        deadline are enforced: httpx's timeouts apply per socket read, so a
        server that trickles a byte a second would never time out. Hand-rolled
        HTTP would buy nothing more. The socket timeout is ``min(timeout,
        time left)``, so a server that stops sending altogether is cut at most
        that long after the deadline; one that keeps sending is cut at it.
        """
        endpoint = self.endpoint
        remaining = deadline_at - time.monotonic()
        if remaining <= 0:
            raise LLMDeadlineError(f"no reply within the {endpoint.total_deadline:g} s deadline")
        started = time.perf_counter()
        create = endpoint.client().chat.completions.with_streaming_response.create
        # every request sent counts for its item (Structured.calls), answered or not
        self._this_thread.calls = self._thread_calls() + 1
        # cofe's messages are plain {"role", "content"} dicts; openai types each role's own
        sent = cast("list[ChatCompletionMessageParam]", messages)
        try:
            with create(
                model=endpoint.model,
                messages=sent,
                timeout=min(endpoint.timeout, remaining),
                **params,
            ) as response:
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > endpoint.max_reply_bytes:
                    raise LLMReplyError(
                        f"the reply is {int(declared)} bytes, over the "
                        f"{endpoint.max_reply_bytes}-byte cap"
                    )
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > endpoint.max_reply_bytes:
                        raise LLMReplyError(
                            f"the reply exceeds the {endpoint.max_reply_bytes}-byte cap"
                        )
                    if time.monotonic() > deadline_at:
                        raise LLMDeadlineError(
                            f"the reply was still arriving at the {endpoint.total_deadline:g} s "
                            f"deadline ({len(body)} bytes read)"
                        )
        except BaseException:  # refused, dropped, timed out, an error status, cut: no reply
            self.usage.add(failed_requests=1, seconds=time.perf_counter() - started)
            raise
        # an answered request is a call (and costs money) even when its body is unusable
        self.usage.add(calls=1, seconds=time.perf_counter() - started)
        text, usage = _parse_reply(bytes(body))
        self.usage.add(**usage)
        return text

    def _chat(
        self, messages: list[dict[str, str]], model: type[BaseModel] | None = None
    ) -> tuple[str, str, bool]:
        """(reply text, cache key, from the cache?): the caller stores it once validated."""
        params = self._params(model)
        key = self._key(messages, params)
        self._this_thread.unreachable = False  # this call's own outcome (a cached one: none)
        self._this_thread.failure = None
        stored = self._cached(key)
        if stored is not None:
            return stored, key, True
        return self.endpoint.redact(self._call(messages, params)), key, False

    def _redacted(self, error: Exception) -> Exception:
        """``error`` with the key removed from its message (a server may echo it)."""
        secrets = self.endpoint.secrets()
        if secrets and any(s in str(error) for s in secrets):
            message = self.endpoint.redact(str(error))
            error.args = (message,)
            if hasattr(error, "message"):
                error.message = message
            if hasattr(error, "body"):
                error.body = None
        return error

    def _reason(self, prefix: str, error: Exception) -> str:
        return self.endpoint.redact(f"{prefix}: {type(error).__name__}: {error}")[:500]

    def complete(self, messages: list[dict[str, str]]) -> str:
        """The reply's text (cached and counted like ``structured``).

        Raises the transport error once the retries run out, or
        ``LLMReplyError`` for an unusable reply (counted as a failure, the key
        redacted from its message): a plain-text reply has nothing to repair,
        and the caller's stage records the error for its sample.
        """
        try:
            text, key, cached = self._chat(messages)
        except Exception as error:
            self.usage.add(failures=1)
            raise self._redacted(error) from None
        if not cached:
            self._store(key, text)
        return text

    def structured(self, messages: list[dict[str, str]], model: type[T]) -> Structured[T]:
        """A reply validated as ``model``; one repair call on invalid JSON, then a failure."""
        calls_before = self._thread_calls()
        try:
            raw, key, cached = self._chat(messages, model)
        except Exception as error:  # transport errors after the retries, unusable replies
            self.usage.add(failures=1)
            return Structured(
                None, self._reason("call failed", error), self._thread_calls() - calls_before
            )
        problem = _validate(raw, model)
        if isinstance(problem, BaseModel):
            if not cached:
                self._store(key, raw)
            return Structured(problem, None, self._thread_calls() - calls_before, raw)
        repair = [
            *messages,
            {"role": "assistant", "content": raw},
            {
                "role": "user",
                "content": "Your reply was not valid: "
                + problem
                + "\nReply again with only the corrected JSON object.",
            },
        ]
        self.usage.add(repairs=1)
        try:
            raw2, key2, cached2 = self._chat(repair, model)
        except Exception as error:
            self.usage.add(failures=1)
            return Structured(
                None,
                self._reason("repair call failed", error),
                self._thread_calls() - calls_before,
                raw,
            )
        second = _validate(raw2, model)
        if isinstance(second, BaseModel):
            if not cached2:
                self._store(key2, raw2)
            return Structured(second, None, self._thread_calls() - calls_before, raw2)
        self.usage.add(failures=1)
        reason = self.endpoint.redact(f"invalid reply after one repair: {second}")[:500]
        return Structured(None, reason, self._thread_calls() - calls_before, raw2)

    def probe(self, timeout: float = 10.0) -> None:
        """Fail in seconds, with the URL and the error, when the endpoint does not answer."""
        self.endpoint.probe(timeout)


def _retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date), if any."""
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def _parse_reply(body: bytes) -> tuple[str, dict[str, int]]:
    """The assistant's text and token counts from a chat-completion body, or ``LLMReplyError``."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else error
        raise LLMReplyError(f"the endpoint's reply is not JSON ({reason})") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not choices or not isinstance(choices, list):
        raise LLMReplyError("the endpoint returned no choices")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    text = message.get("content") if isinstance(message, dict) else None
    if text is not None and not isinstance(text, str):
        raise LLMReplyError("the endpoint's reply has no text content")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    counts = {}
    for name in ("prompt_tokens", "completion_tokens"):
        value = usage.get(name)
        counts[name] = value if isinstance(value, int) and value >= 0 else 0
    return text or "", counts


def _validate(raw: str, model: type[T]) -> T | str:
    try:
        data = extract_json(raw)
    except ValueError as error:
        return f"not JSON ({error})"
    try:
        return model.model_validate(data)
    except RecursionError:
        return "the JSON is nested too deeply"
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        return f"{where}: {first['msg']}"
