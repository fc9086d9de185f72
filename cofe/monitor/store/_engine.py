"""Connecting to the store's database: SQLAlchemy engines for SQLite and PostgreSQL.

One engine per store. SQLAlchemy's dialects write every statement for both databases
(placeholders, upserts, ``IN`` lists of any length, ``RETURNING``), its pool hands each
thread a connection of its own, and ``pool_pre_ping`` replaces a connection the server
dropped before it is used. What the dialects cannot know is set here:

- SQLite: WAL (readers never wait for the collector), ``synchronous=FULL`` (a batch is
  on disk before it is acknowledged), foreign keys, a 30 s busy timeout; a write
  transaction starts with ``BEGIN IMMEDIATE`` (it takes the write lock first, so two
  writers never deadlock upgrading a read), a read with a deferred ``BEGIN``;
- read-only stores (the dashboard): SQLite ``query_only``, PostgreSQL read-only sessions,
  on every connection the pool opens;
- :meth:`Engine.retrying`: a read, or a whole write transaction, run again -- with
  backoff, for at most :data:`RECONNECT_SECONDS` -- when it failed because the connection
  went away (a PostgreSQL restart costs a few seconds, not the process). A transaction is
  all or nothing, so running it again stores nothing twice.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, unquote

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from cofe._errors import ConfigurationError

T = TypeVar("T")
IN_SLICE = 10_000  # values of one IN list (SQLite and psycopg cap a statement's parameters)


def slices(items: Sequence[T], size: int = IN_SLICE) -> Iterator[Sequence[T]]:
    """Slices of ``items`` for ``IN`` lists."""
    for at in range(0, len(items), size):
        yield items[at : at + size]


def upsert(table: sa.Table, connection: Connection) -> Any:
    """``INSERT ... ON CONFLICT`` in the connection's dialect (both have it)."""
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


POSTGRES_SCHEMES = ("postgresql://", "postgres://")
RECONNECT_SECONDS = 15.0  # how long a statement waits for a restarted server, at most
_WRITE = "cofe_write"  # execution option: this transaction writes (SQLite: BEGIN IMMEDIATE)


class StoreError(ConfigurationError):
    """The store cannot be opened or used as asked; the message says which and why."""


class _Turns:
    """Write transactions of one process taken in arrival order (SQLite).

    SQLite lets one writer in at a time and makes the others poll, sleeping up to 100 ms
    between tries: with eight senders a batch could wait several rounds while later ones
    got in (the senders' p95 twice their median). Here each waits its turn on an event
    the previous writer sets as it finishes; another process still meets SQLite's own
    busy timeout."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._lock = threading.Lock()
        self._queue: deque[threading.Event] = deque()
        self._held = False

    @contextmanager
    def turn(self) -> Iterator[None]:
        with self._lock:
            mine = None
            if self._held:
                mine = threading.Event()
                self._queue.append(mine)
            self._held = True
        if mine is not None and not mine.wait(self.timeout):
            with self._lock:
                if mine in self._queue:  # not handed the turn meanwhile: give up
                    self._queue.remove(mine)
                    raise StoreError(f"no turn to write within {self.timeout:g} s (busy)")
        try:
            yield
        finally:
            with self._lock:
                if self._queue:
                    self._queue.popleft().set()  # handed over: still held
                else:
                    self._held = False


def shown_location(location: str) -> str:
    """A store's location fit to print: a password in the URL (or as a parameter) masked.

    The user information ends at the *last* ``@`` (a password may hold ``@`` and ``/``,
    which a URL parser would take for the host or the path): everything between the first
    ``:`` after the scheme and that ``@`` is masked. Masking too much (an ``@`` in a query
    parameter) only hides more; a password is never shown, whole or in part."""
    text = str(location)
    scheme, sep, rest = text.partition("://")
    if sep and "@" in rest:
        userinfo, _, host = rest.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        if colon:
            text = f"{scheme}://{user}:***@{host}"
    return re.sub(r"(?i)(password\s*=\s*)('[^']*'|[^&\s]*)", r"\1***", text)


def _driver_url(rest: str) -> tuple[str, str]:
    """A URL's part after ``://`` with its user and password percent-encoded, as the
    driver parses them; and the password. The user information ends at the *last* ``@``
    before the query (a password may hold ``@``, ``:`` and ``/``: the driver took
    ``p@ss@db`` for the host ``ss@db`` and printed it); one already encoded is kept."""
    head, question, query = rest.rpartition("?")
    if not question or "=" not in query:
        head, question, query = rest, "", ""
    userinfo, at, host = head.rpartition("@")
    if not at:
        return rest, ""
    user, colon, password = userinfo.partition(":")
    password = unquote(password)
    encoded = quote(unquote(user), safe="") + (f":{quote(password, safe='')}" if colon else "")
    return f"{encoded}@{host}{question}{query}", password


def _immutable(path: Path) -> str:
    """``&immutable=1`` where no one can be writing the store: its folder is not writable
    here and it has no write-ahead log (a writer keeps one while it runs). SQLite cannot
    read a WAL store read-only without the log's shared-memory file, which it cannot
    create in such a folder -- a read-only mount, or a store left by a stopped collector
    in a folder of another user's."""
    if os.access(path.parent, os.W_OK) or Path(f"{path}-wal").exists():
        return ""
    return "&immutable=1"


class Engine:
    """The store's SQLAlchemy engine with the settings above; ``dialect`` is ``sqlite`` or
    ``postgresql``."""

    def __init__(self, location: str | Path, *, read_only: bool = False) -> None:
        text = str(location)
        self.read_only = read_only
        self.path: Path | None = None
        self._local = threading.local()  # inspection: the transaction of this thread
        self._turns = _Turns(timeout=30.0)  # SQLite: this process's writers, in order
        if text.startswith(POSTGRES_SCHEMES):
            self.dialect = "postgresql"
            self.sa = self._postgres(text)
        else:
            self.dialect = "sqlite"
            self.path = Path(text)
            self.sa = self._sqlite(self.path)

    # --- the two databases ---------------------------------------------------------------

    def _sqlite(self, path: Path) -> sa.Engine:
        if path.is_dir():
            raise StoreError(f"{path}: is a folder; the SQLite store is a file (e.g. monitor.db)")
        if not path.parent.exists():
            raise StoreError(f"{path}: its folder {path.parent} does not exist")
        read_only = self.read_only
        if read_only:
            # opened read-only by SQLite too (query_only alone still opened the file to
            # write): a store on a read-only mount, or one whose file or folder this user
            # may not write, was "not a cofe monitoring store (unable to open database file)"
            uri = f"file:{quote(str(path.resolve()))}?mode=ro" + _immutable(path)
            engine = sa.create_engine(
                "sqlite://",
                creator=lambda: sqlite3.connect(
                    uri, uri=True, timeout=30.0, check_same_thread=False
                ),
            )
        else:
            engine = sa.create_engine(
                f"sqlite:///{path}", connect_args={"timeout": 30.0, "check_same_thread": False}
            )

        @event.listens_for(engine, "connect")
        def configure(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # transactions are begun below, by us
            cursor = dbapi_connection.cursor()
            # a reader sets nothing a writer owns (the journal mode is the file's own)
            writer = ("journal_mode=WAL", "synchronous=FULL")
            for pragma in (
                *(() if read_only else writer),
                "foreign_keys=ON",
                *(("query_only=ON",) if read_only else ()),
            ):
                cursor.execute(f"PRAGMA {pragma}")
            cursor.close()

        @event.listens_for(engine, "begin")
        def begin(connection: Connection) -> None:
            writes = connection.get_execution_options().get(_WRITE, False)
            connection.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")

        try:
            with engine.connect() as connection:
                connection.exec_driver_sql("SELECT 1")
        except sa.exc.DBAPIError as error:
            engine.dispose()
            raise StoreError(f"{path}: not a cofe monitoring store ({error.orig})") from None
        return engine

    def _postgres(self, url: str) -> sa.Engine:
        try:
            import psycopg  # noqa: F401 -- the driver SQLAlchemy's dialect loads
        except ImportError:
            raise StoreError(
                'a PostgreSQL store needs psycopg: pip install "cofe[postgres]"'
            ) from None
        rest, password = _driver_url(url.partition("://")[2])
        # use_insertmanyvalues off: a batch's rows go through psycopg's executemany (one
        # statement, pipelined) rather than one long multi-VALUES text per batch, which
        # psycopg parses anew each time (it was half of ingest's CPU)
        engine = sa.create_engine(
            f"postgresql+psycopg://{rest}",
            pool_pre_ping=True,
            pool_size=8,
            max_overflow=16,
            use_insertmanyvalues=False,
            connect_args={"connect_timeout": 10},
        )
        if self.read_only:

            @event.listens_for(engine, "connect")
            def configure(dbapi_connection: Any, _record: Any) -> None:
                # a reopened connection (after a restart) is read-only too
                dbapi_connection.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                dbapi_connection.commit()

        try:
            with engine.connect() as connection:
                connection.exec_driver_sql("SELECT 1")
        except (sa.exc.DBAPIError, sa.exc.ArgumentError, ValueError) as error:
            engine.dispose()
            cause = str(getattr(error, "orig", None) or error)
            for secret in (password, *password.split("@")[1:], quote(password, safe="")):
                if len(secret) >= 2:  # a driver quoting what it took for the host
                    cause = cause.replace(secret, "***")
            raise StoreError(
                f"{shown_location(url)}: cannot connect to PostgreSQL "
                f"({shown_location(cause).strip()})"
            ) from None
        return engine

    # --- transactions --------------------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction: committed when the block ends, rolled back on an error
        (SQLite: this process's write transactions one after another, in arrival order)."""
        turn = self._turns.turn() if self.dialect == "sqlite" else nullcontext()
        with turn, self.sa.connect() as connection:
            connection.execution_options(**{_WRITE: True})
            with connection.begin():
                yield connection

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read: one consistent snapshot for the block."""
        with self.sa.connect() as connection, connection.begin():
            yield connection

    def _lost(self, error: BaseException) -> bool:
        """Whether ``error`` means the connection went away (worth a retry on a new one)."""
        if self.dialect != "postgresql" or not isinstance(error, sa.exc.DBAPIError):
            return False
        if error.connection_invalidated:
            return True
        if isinstance(error, sa.exc.OperationalError | sa.exc.InterfaceError):
            text = str(error.orig).lower()
            return any(
                word in text
                for word in ("connect", "terminat", "shutdown", "closed", "starting up", "lost")
            )
        return False

    def retrying(self, work: Callable[[], T]) -> T:
        """``work()`` run again after a lost connection (see the module)."""
        if self.dialect != "postgresql":
            return work()
        from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_exponential

        retry = Retrying(
            retry=retry_if_exception(self._lost),
            reraise=True,
            stop=stop_after_delay(RECONNECT_SECONDS),
            wait=wait_exponential(multiplier=0.2, max=2.0),
        )
        return retry(work)

    def reading(self, work: Callable[[Connection], T]) -> T:
        """``work`` in one read transaction, run again after a lost connection."""

        def run() -> T:
            with self.read() as connection:
                return work(connection)

        return self.retrying(run)

    def writing(self, work: Callable[[Connection], T]) -> T:
        """``work`` in one write transaction, run again whole after a lost connection."""

        def run() -> T:
            with self.write() as connection:
                return work(connection)

        return self.retrying(run)

    def size_bytes(self) -> int:
        if self.path is not None:
            return sum(
                p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists()
            )
        with self.read() as connection:
            return int(
                connection.scalar(sa.select(sa.func.pg_database_size(sa.func.current_database())))
                or 0
            )

    def checkpoint(self) -> None:
        """SQLite: fold the write-ahead log into the database file (outside a transaction,
        as SQLite requires); PostgreSQL: nothing to do."""
        if self.dialect != "sqlite":
            return
        raw = self.sa.raw_connection()
        try:
            cursor = raw.cursor()
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            cursor.close()
        finally:
            raw.close()

    def close(self) -> None:
        self.sa.dispose()

    # --- inspection (tests, benchmarks, a person at a prompt; cofe itself never calls these) --

    @property
    def engine(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.dialect

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction for the :meth:`execute` calls inside it (this thread's)."""
        with self.write() as connection:
            self._local.connection = connection
            try:
                yield
            finally:
                self._local.connection = None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One SQL statement of a person's (``?`` placeholders), its rows as tuples: for
        inspecting a store. The store's own queries are SQLAlchemy Core, in this package."""
        if self.dialect == "postgresql":  # psycopg's placeholders
            sql = sql.replace("%", "%%").replace("?", "%s")
        current = getattr(self._local, "connection", None)
        if current is not None:
            result = current.exec_driver_sql(sql, tuple(params))
            return [tuple(r) for r in result] if result.returns_rows else []
        with self.write() as connection:
            result = connection.exec_driver_sql(sql, tuple(params))
            return [tuple(r) for r in result] if result.returns_rows else []

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        for row in rows:
            self.execute(sql, row)
