"""Progress for people who are not watching a terminal (CI logs, ``> log 2>&1``).

On a terminal the progress bars redraw themselves in place. Anywhere else a bar's redraws
would be carriage returns nobody sees, so the bars were switched off and a 17-minute
scoring showed nothing. Here, while stderr is not a terminal, each bar's state is written
as a plain line every ``COFE_PROGRESS_SECONDS`` seconds (10 by default; 0: no lines),
and its last state when it ends (a bar done sooner prints nothing); everything else written
to stderr passes unchanged.

``progress_bar`` makes the bars: tqdm (with the ``importlib.metadata`` its version lookup
pulls in, ~0.03 s) is imported only for a bar someone can see -- on a terminal at once,
in plain lines once the bar has run long enough for its first line.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm

EVERY_SECONDS = 10.0
_BAR = re.compile(r"\|[^|\n]*\|")  # the drawn bar between the percentage and the counts


def _counts(state: str) -> str:
    """A state without its timings: "scoring: 100% 30/30"."""
    return state.split("[", 1)[0].strip()


def _every() -> float:
    value = os.environ.get("COFE_PROGRESS_SECONDS", "")
    try:
        return max(float(value), 0.0) if value.strip() else EVERY_SECONDS
    except ValueError:
        return EVERY_SECONDS


class PlainProgress:
    """A stand-in for stderr that turns a progress bar's in-place redraws (``"\r..."``) into
    a plain line once the bar has run ``every`` seconds, then every ``every`` seconds, and
    its final state when it closes (a short bar prints nothing); other writes pass through."""

    def __init__(self, stream: TextIO, every: float) -> None:
        self._stream = stream
        self._every = every
        self._lock = threading.Lock()
        self._state = ""  # the bar's newest state
        self._since: float | None = None  # when the current bar started, or its last line
        self._shown = False  # a line of the current bar was written
        self._counts = ""  # how far the last line said the bar was
        self._redrawn = False  # the last write was a redraw: a newline now closes the bar

    def started_at(self, when: float) -> None:
        """The bar drawn last began at ``when`` (``time.monotonic``), before it was drawn:
        its first line is due ``every`` seconds after that (``progress_bar``'s late bars)."""
        with self._lock:
            self._since = when

    def write(self, text: str) -> int:
        with self._lock:
            redraw, self._redrawn = self._redrawn, text.startswith("\r")
            if text.startswith("\r"):
                state = _BAR.sub(" ", text.strip("\r")).rstrip()
                if state:
                    now = time.monotonic()
                    self._state = state
                    if self._since is None:
                        self._since = now
                    elif now - self._since >= self._every:
                        self._line(now)
            elif text == "\n" and redraw and self._since is not None:  # the bar closed
                if self._shown and self._state and _counts(self._state) != self._counts:
                    self._line(time.monotonic())
                self._state, self._since, self._shown = "", None, False
            elif text:
                self._stream.write(text)
        return len(text)

    def _line(self, now: float) -> None:
        self._counts = _counts(self._state)
        self._stream.write(self._state + "\n")
        self._stream.flush()
        self._state, self._since, self._shown = "", now, True

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def progress_wanted() -> bool:
    """Whether a long step should show a progress bar now: on a terminal, or inside
    ``progress_lines`` (which turns the bar into plain lines)."""
    stream = sys.stderr
    return isinstance(stream, PlainProgress) or bool(stream is not None and stream.isatty())


@contextlib.contextmanager
def progress_lines() -> Iterator[bool]:
    """Whether to show progress, for the ``with`` block: bars on a terminal; plain lines every
    few seconds anywhere else (stderr is swapped for ``PlainProgress`` meanwhile)."""
    stream = sys.stderr
    if isinstance(stream, PlainProgress):  # already inside (cofe run, then its scoring)
        yield True
        return
    if stream is None or stream.isatty():
        yield stream is not None
        return
    every = _every()
    if every <= 0:
        yield False
        return
    plain = PlainProgress(stream, every)
    sys.stderr = plain
    try:
        yield True
    finally:
        if sys.stderr is plain:
            sys.stderr = stream


class Bar(Protocol):
    """What cofe's long steps do with a progress bar (a ``tqdm`` has all of it)."""

    def update(self, n: float | None = 1) -> bool | None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Bar: ...

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None: ...


def progress_bar(*, disable: bool = False, **options: Any) -> Bar:
    """A tqdm bar (``options`` are tqdm's), or a stand-in that costs no import where nobody
    would see one yet: ``disable``, or stderr turned into plain lines (``progress_lines``)
    -- there a bar becomes a real one only once it has run the lines' interval, so a step
    done sooner (which would print nothing anyway) never loads tqdm."""
    if disable:
        return _LateBar(options, every=None)
    if isinstance(sys.stderr, PlainProgress):
        return _LateBar(options, every=sys.stderr._every)
    from tqdm import tqdm

    return tqdm(**options)


class _LateBar:
    """Counts until the bar has run ``every`` seconds (None: never shown), then hands the
    count and its start to a tqdm bar, which draws from there as if it had run all along."""

    def __init__(self, options: dict[str, Any], every: float | None) -> None:
        self._options = options
        self._every = every
        self._n = 0.0
        self._started = time.monotonic()
        self._started_wall = time.time()  # tqdm's own clock, for its elapsed time and rate
        self._bar: tqdm[Any] | None = None

    def update(self, n: float | None = 1) -> bool | None:
        if self._bar is not None:
            return self._bar.update(n)
        self._n += n or 0
        if self._every is not None and time.monotonic() - self._started >= self._every:
            self._show()
        return None

    def _show(self) -> None:
        from tqdm import tqdm

        n = int(self._n) if float(self._n).is_integer() else self._n
        bar = tqdm(**self._options, initial=n)
        bar.start_t = self._started_wall  # what tqdm.reset/unpause set: elapsed from the start
        stream = sys.stderr
        if isinstance(stream, PlainProgress):
            stream.started_at(self._started)  # the first line is due now, not `every` from now
        bar.refresh()
        self._bar = bar

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __enter__(self) -> _LateBar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
