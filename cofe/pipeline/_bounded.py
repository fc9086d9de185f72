"""Each document parsed under a time and a memory bound, in a worker process.

The parsers behind ``parse_file`` (unstructured, pdfminer, lxml) have no bound of their
own: a 45 kB PDF of 400,000 text operators parsed for over 300 s and took 1.75 GB, and a
PDF whose content refers to itself never ends. So files are parsed by one worker process,
forked from this one (it inherits what this process has loaded and set, and imports the
parsers once for every file after), which the parent watches: past a file's time, or past
its memory -- the worker's resident memory over what it held when the file began, read ten
times a second from ``/proc`` -- the worker is killed, the file reported as skipped with the
bound it crossed, and the next file gets a new worker. A bad file costs its own bound, never
the run.

Where ``fork`` is unavailable (Windows) files are parsed in this process, unbounded.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from cofe._errors import CofeError, InputError, InputProblem
from cofe.runlog import ParsedDocument

# taken around a fork: a thread printing progress must hold no lock of stderr's at that
# instant, or a worker that writes to stderr would wait for it for ever
FORK_LOCK = threading.Lock()
POLL_SECONDS = 0.1


@dataclass(frozen=True)
class ParseLimits:
    """The bounds on one file's parse: ``seconds`` for a file, and ``seconds_per_page``
    more for each page of a PDF after its first; ``memory_mb`` of resident memory gained
    while parsing it. ``None`` (or 0) for a bound: none."""

    seconds: float | None = 60.0
    seconds_per_page: float = 2.0
    memory_mb: float | None = 2048.0

    @classmethod
    def from_env(cls) -> ParseLimits:
        """The defaults, or ``COFE_PARSE_SECONDS`` and ``COFE_PARSE_MEMORY_MB`` (0: no bound)
        where set: what ``cofe run --docs``, ``cofe parse`` and ``cofe sweep`` use."""
        return cls(
            seconds=_env_number("COFE_PARSE_SECONDS", cls.seconds),
            memory_mb=_env_number("COFE_PARSE_MEMORY_MB", cls.memory_mb),
        )

    def seconds_for(self, pages: int) -> float | None:
        if not self.seconds:
            return None
        return self.seconds + self.seconds_per_page * max(0, pages - 1)

    def describe(self) -> str:
        time_part = (
            f"{self.seconds:g} s a file (+{self.seconds_per_page:g} s a PDF page)"
            if self.seconds
            else "no time bound"
        )
        memory_part = f"{self.memory_mb:g} MB" if self.memory_mb else "no memory bound"
        return f"{time_part}, {memory_part}"


def _env_number(name: str, default: float | None) -> float | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise InputError(
            InputProblem(
                f"${name}",
                None,
                None,
                f"must be a number of at least 0 (0: no bound), not {text!r}",
            )
        )
    return value or None


class ParseFailed(Exception):
    """A file the worker could not parse: the error's type name and message as raised
    there (``skipped: KeyError: ...``; no name for cofe's own refusals, which read as they
    are), or a bound it crossed."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def fork_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _serve(connection: Connection) -> None:
    """The worker: parse each ``(path, doc_id)`` it is sent, answer the document or the
    error, until the pipe closes."""
    from cofe.pipeline import _parse  # looked up per call: what the parent set, it sees

    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        path, doc_id = request
        try:
            answer: tuple[str, Any] = ("ok", _parse.parse_file(Path(path), doc_id))
        except MemoryError:
            answer = ("error", ("MemoryError", "out of memory while parsing"))
        except Exception as error:  # any parser failure is this file's
            # cofe's own refusal reads as it is ("no text found"): no type name before it
            kind = "" if isinstance(error, CofeError) else type(error).__name__
            answer = ("error", (kind, str(error)))
        connection.send(answer)


def _resident_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None  # no /proc (macOS): the time bound alone


class BoundedParser:
    """Parses files one at a time in a worker process under ``limits`` (see the module's
    docstring). Use as a context manager; ``parse`` raises ParseFailed."""

    def __init__(self, limits: ParseLimits) -> None:
        self.limits = limits
        self._process: Any = None
        self._connection: Connection | None = None

    def __enter__(self) -> BoundedParser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(OSError):
                self._connection.send(None)
            self._connection.close()
            self._connection = None
        if self._process is not None:
            self._process.join(5)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
            self._process = None

    def _start(self) -> tuple[Any, Connection]:
        if self._process is None or self._connection is None:
            context = multiprocessing.get_context("fork")
            ours, theirs = context.Pipe()
            with FORK_LOCK:
                process = context.Process(
                    target=_serve, args=(theirs,), name="cofe-parse", daemon=True
                )
                process.start()
            theirs.close()
            self._process, self._connection = process, ours
        return self._process, self._connection

    def _kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join()
        if self._connection is not None:
            self._connection.close()
        self._process = self._connection = None

    def parse(self, path: Path, doc_id: str, pages: int = 1) -> ParsedDocument:
        process, connection = self._start()
        seconds = self.limits.seconds_for(pages)
        memory = self.limits.memory_mb
        baseline = _resident_bytes(process.pid)
        started = time.monotonic()
        connection.send((str(path), doc_id))
        peak = 0
        while True:
            try:
                ready = connection.poll(POLL_SECONDS)
            except OSError:
                ready = True  # the worker died: recv says so
            if ready:
                try:
                    status, value = connection.recv()
                except (EOFError, OSError):
                    process.join(1)
                    code = process.exitcode
                    self._kill()
                    how = (
                        f"killed by signal {-code}" + (" (out of memory?)" if code == -9 else "")
                        if code is not None and code < 0
                        else f"exit code {code}"
                    )
                    raise ParseFailed(
                        "ParserCrashed", f"the parser died while reading this file ({how})"
                    ) from None
                if status == "ok":
                    document: ParsedDocument = value
                    return document
                raise ParseFailed(*value)
            elapsed = time.monotonic() - started
            if seconds is not None and elapsed > seconds:
                self._kill()
                raise ParseFailed(
                    "TimeLimit",
                    f"parsing took longer than {seconds:g} s, the bound on one file "
                    f"({_bound_words(self.limits, pages)}); stopped, the other files go on",
                )
            resident = _resident_bytes(process.pid)
            if memory and resident is not None and baseline is not None:
                peak = max(peak, resident - baseline)
                if peak > memory * 2**20:
                    self._kill()
                    raise ParseFailed(
                        "MemoryLimit",
                        f"parsing took more than {memory:g} MB of memory, the bound on one "
                        f"file ({peak / 2**20:,.0f} MB when stopped); stopped, the other "
                        "files go on",
                    )


def _bound_words(limits: ParseLimits, pages: int) -> str:
    if pages > 1:
        return (
            f"{limits.seconds:g} s, and {limits.seconds_per_page:g} s for each of its "
            f"{pages - 1} more pages"
        )
    return f"{limits.seconds:g} s a file, a PDF {limits.seconds_per_page:g} s more a page"
