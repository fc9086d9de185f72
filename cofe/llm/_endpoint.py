"""Where an OpenAI-compatible endpoint is and how to call it; the key never leaves memory."""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from cofe._errors import EndpointError

if TYPE_CHECKING:
    from openai import OpenAI

# how an endpoint is asked for JSON -- off: plain chat (works everywhere); json_object /
# json_schema: the endpoint constrains the reply
JSON_MODES = ("off", "json_object", "json_schema")
# keys shorter than this (local servers' "none", test keys) would redact ordinary words
_MIN_SECRET = 8
REDACTED = "[REDACTED]"
PROBE_BYTES = 4_000_000  # a model list (a server listing thousands is ~100 kB)
ERROR_BYTES = 64 * 1024  # of an error or redirect body: enough for its message


class EndpointUnreachable(EndpointError):
    """``probe`` found the endpoint not answering, refusing the key, or not serving the model.

    A failure, not a usage error: the CLI maps it to exit code 1.
    """

    exit_code = 1


class EndpointDown(EndpointUnreachable):
    """The endpoint stopped answering during a pass (``LLMClient.check_endpoint``): calls in
    a row could not reach it. The pass stops; what it finished is kept for the next one."""


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every secret (the API key, the Authorization value) replaced by [REDACTED]."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    return text


@dataclass(frozen=True)
class Endpoint:
    """Base URL, model and key; flags win over ``OPENAI_BASE_URL`` / ``OPENAI_MODEL`` / ``OPENAI_API_KEY``.

    ``describe()`` (what goes into manifests and logs) never includes the key.
    ``timeout`` bounds each attempt's socket waits; ``deadline`` bounds a whole
    call, retries and back-off included (default: ``timeout`` per attempt);
    ``max_reply_bytes`` caps a reply body; a ``Retry-After`` longer than
    ``max_retry_after`` seconds is not waited for.
    """

    base_url: str | None
    model: str
    api_key: str = field(repr=False)
    timeout: float = 60.0
    max_retries: int = 3
    deadline: float | None = None
    max_reply_bytes: int = 8_000_000
    max_retry_after: float = 60.0

    @classmethod
    def from_env(
        cls,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        **limits: Any,
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
        return cls(base_url, model, api_key, timeout, max_retries, **limits)

    @property
    def url(self) -> str:
        return self.base_url or "https://api.openai.com/v1"

    @property
    def total_deadline(self) -> float:
        """Seconds one call may take in all, retries and waits included."""
        if self.deadline is not None:
            return self.deadline
        return self.timeout * (self.max_retries + 1) + min(self.max_retries * 8.0, 60.0)

    def secrets(self) -> tuple[str, ...]:
        """What must never be printed or written: the key and the Authorization header value."""
        key = self.api_key or ""
        if len(key) < _MIN_SECRET:
            return ()
        return (f"Bearer {key}", key)

    def redact(self, text: str) -> str:
        return redact(text, self.secrets())

    def describe(self) -> dict[str, Any]:
        return {"base_url": self.url, "model": self.model}

    def client(self) -> OpenAI:
        """One ``openai.OpenAI`` per endpoint, shared by every caller and thread (it is thread-safe).

        Only ``LLMClient`` calls it: every request goes through its cache and usage counts.
        """
        return _client_for(self)

    def probe(self, timeout: float = 10.0) -> None:
        """Check once, in seconds, that the endpoint answers and serves the model.

        Raises ``EndpointError`` with a one-line message naming the URL and the
        error (connection refused, 401, unknown model). ``GET /models`` is
        asked first; servers without it (404/405) get a one-token chat call.
        """
        import openai

        from cofe.llm._deadline import until

        client = self.client().with_options(timeout=timeout, max_retries=0)
        # openai loads its resources on first use (seconds, on a busy machine): before the clock
        listing = client.models.with_streaming_response.list
        chat = client.chat.completions.with_streaming_response.create
        deadline_at = time.monotonic() + timeout
        try:
            # one deadline over every byte of the probe (httpx's timeouts are per read: a
            # head trickled a byte a second never times out), and a byte cap on each reply
            with until(deadline_at):
                try:
                    with listing() as response:
                        listed = _read_capped(response, deadline_at, timeout, self.url)
                    served = _model_ids(listed, self.url)
                except openai.APIStatusError as error:
                    if error.status_code not in (404, 405, 501):
                        raise
                    served = None
                if served and self.model not in served:
                    shown = ", ".join(served[:8]) + (" ..." if len(served) > 8 else "")
                    raise EndpointUnreachable(
                        f"endpoint {self.url}: model {self.model!r} is not served "
                        f"(it serves {shown})"
                    )
                if served is None:  # no model list: the smallest real call tells us
                    with chat(
                        model=self.model,
                        messages=[{"role": "user", "content": "ping"}],
                        max_tokens=1,
                    ) as response:
                        _read_capped(response, deadline_at, timeout, self.url)
        except EndpointError:
            raise
        except openai.APIStatusError as error:
            detail = _status_detail(error)
            raise EndpointUnreachable(self.redact(f"endpoint {self.url}: {detail}")) from None
        except Exception as error:  # connection refused, DNS, timeout, a non-OpenAI reply
            cause = error.__cause__ or error.__context__
            why = f"{type(error).__name__}: {error}"
            if cause is not None and str(cause):
                why += f" ({cause})"
            raise EndpointUnreachable(self.redact(f"endpoint {self.url}: {why}")) from None


def _read_capped(response: Any, deadline_at: float, timeout: float, url: str) -> bytes:
    """A streamed reply's body, read within the probe's deadline and ``PROBE_BYTES``."""
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > PROBE_BYTES:
            raise EndpointUnreachable(
                f"endpoint {url}: the reply exceeds {PROBE_BYTES:,} bytes (not an OpenAI API?)"
            )
        if time.monotonic() > deadline_at:
            raise EndpointUnreachable(
                f"endpoint {url}: the reply was still arriving after {timeout:g} s"
            )
    return bytes(body)


def _model_ids(body: bytes, url: str) -> list[str]:
    """The ids of ``GET /models``'s ``data`` (OpenAI's list shape)."""
    try:
        data = json.loads(body).get("data")
        return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]
    except (ValueError, AttributeError, TypeError, RecursionError):
        raise EndpointUnreachable(f"endpoint {url}: GET /models is not a model list") from None


def _capped_error_body(response: Any) -> None:
    """An httpx response hook: the body of an error or redirect is read only up to
    ``ERROR_BYTES`` (openai reads it whole for its message: an endless one took the probe
    to 3.2 GB). A successful reply is read by its caller under its own cap."""
    if response.status_code >= 300:
        response.stream = _capped_class()(response.stream, ERROR_BYTES)


@lru_cache(maxsize=1)
def _capped_class() -> Any:
    """httpx's ``SyncByteStream`` ending after ``limit`` bytes (built on first use: cofe's
    core imports no HTTP client)."""
    import httpx

    class Capped(httpx.SyncByteStream):
        def __init__(self, stream: Any, limit: int) -> None:
            self._stream, self._limit = stream, limit

        def __iter__(self) -> Any:
            left = self._limit
            for chunk in self._stream:
                yield chunk[:left]
                left -= len(chunk)
                if left <= 0:
                    return

        def close(self) -> None:
            self._stream.close()

    return Capped


def _status_detail(error: Any) -> str:
    status = error.status_code
    label = {
        401: "unauthorized (check the API key)",
        403: "forbidden",
        404: "not found (unknown model or wrong base URL)",
    }.get(status, "error")
    body = error.body if isinstance(error.body, dict) else None
    message = (body or {}).get("message") or str(error)
    return re.sub(r"\s+", " ", f"HTTP {status} {label}: {message}")[:300]


@lru_cache(maxsize=32)
def _client_for(endpoint: Endpoint) -> OpenAI:
    from openai import DefaultHttpxClient, OpenAI

    from cofe.llm._deadline import with_deadlines

    # LLMClient retries itself (max_retries=0 here) so one total deadline covers
    # every attempt and every Retry-After wait; the openai client would sleep
    # up to 60 s per Retry-After and knows no per-call deadline. Its HTTP client's
    # connections are bounded by the calling LLMClient's deadline, head and body alike.
    # A redirect is not followed (openai's client follows them: a 302 turned a POST into a
    # GET whose reply was taken as the answer, and carried the key to wherever it pointed):
    # it is an error status like any other. Error bodies are capped (_capped_error_body).
    return OpenAI(
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        timeout=endpoint.timeout,
        max_retries=0,
        http_client=with_deadlines(
            DefaultHttpxClient(
                follow_redirects=False, event_hooks={"response": [_capped_error_body]}
            )
        ),
    )
