"""Request bodies in the collector: the memory budget they are read within, and reading
one so that a sender too slow to finish by the request deadline gives its share back."""

from __future__ import annotations

import threading
import time
from typing import cast

import anyio
from starlette.requests import Request
from starlette.types import Message


class _ByteBudget:
    """Bytes of request bodies held at once: a body is read only when its Content-Length
    fits (small batches pass while a few large ones are read; memory stays bounded)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.held = limit, 0
        self._changed = threading.Condition()
        self._waiting: list[int] = []  # the sizes of the bodies waiting for room

    def _fits(self, n: int) -> bool:
        """Room for ``n`` bytes, and none taken from a smaller body waiting: the smallest
        goes first. Otherwise a few senders declaring 64 MB (each cut after its grace,
        reconnecting at once) took turns at the whole budget and a 2 kB batch waited
        behind them for 14 s, past an exporter's 10 s timeout."""
        if self.held + n > self.limit:
            return False
        smallest = min(self._waiting, default=n)
        return smallest >= n or self.held + smallest + n <= self.limit

    def acquire(self, n: int, timeout: float) -> bool:
        with self._changed:
            if self._fits(n):
                self.held += n
                return True
            if timeout <= 0:
                return False
            self._waiting.append(n)
            try:
                if not self._changed.wait_for(lambda: self._fits(n), timeout):
                    return False
            finally:
                self._waiting.remove(n)
                self._changed.notify_all()  # a body that deferred to this one may fit now
            self.held += n
            return True

    def exchange(self, held: int, wanted: int, timeout: float) -> bool:
        """Give back ``held`` bytes and wait for ``wanted`` instead (a compressed body's
        share swapped for its inflated size). Nothing is held while waiting -- two bodies
        each waiting for the other's share cannot stall -- and nothing when it fails."""
        with self._changed:
            self.held -= held
            self._changed.notify_all()
            if not self._changed.wait_for(lambda: self.held + wanted <= self.limit, timeout):
                return False
            self.held += wanted
            return True

    def release(self, n: int) -> None:
        with self._changed:
            self.held -= n
            self._changed.notify_all()


BODY_GRACE_SECONDS = 2.0  # a body is judged on its pace only after this long


async def _read_body(request: Request, length: int, seconds: float) -> bytes | None:
    """The body, ``length`` bytes, filled in place as it arrives (one copy held: a bytearray
    both decoders and zlib take as bytes); None if the sender stopped short, or once its
    pace says it cannot arrive within the request's ``seconds``: its share of the memory
    budget was taken for the whole body, and a sender declaring 64 MB then sending 1 kB/s
    held it until the deadline, every other batch answered 503 meanwhile."""
    body, filled = bytearray(length), 0
    started = time.monotonic()
    while filled < length:
        message: Message | None = None
        with anyio.move_on_after(1.0):  # uvicorn's receive may be cancelled and called again
            message = await request.receive()
        if message is not None:
            if message["type"] != "http.request":
                return None  # the client went away
            chunk = message.get("body", b"")
            if filled + len(chunk) > length:
                return None  # more than announced (h11 would not pass it)
            body[filled : filled + len(chunk)] = chunk
            filled += len(chunk)
            if not message.get("more_body", False):
                break
        elapsed = time.monotonic() - started
        if elapsed >= BODY_GRACE_SECONDS and filled < length:
            rate = filled / elapsed
            if filled + rate * (seconds - elapsed) < length:
                return None  # hopeless: it would miss the deadline at this pace
    return cast(bytes, body) if filled == length else None
