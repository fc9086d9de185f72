"""One SQL dialect for two engines: the embedded SQLite default and PostgreSQL.

Every query cofe runs is written once, with ``?`` placeholders and types both
engines read the same way (TEXT, BIGINT, DOUBLE PRECISION; JSON kept as TEXT);
``INSERT ... ON CONFLICT`` is common to both. Only connecting, the placeholder
style and the start of a write transaction differ, and they live here.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def shown_location(location: str) -> str:
    """A store's location fit to print: a password in the URL (or as a parameter) masked."""
    text = re.sub(r"://([^:@/]+):[^@/]*@", r"://\1:***@", str(location))
    return re.sub(r"(?i)(password=)[^&\s]*", r"\1***", text)


class StoreError(ValueError):
    """The store cannot be opened or used as asked; the message says which and why."""


class Database:
    """A connection with one writer at a time (the collector's threads share it)."""

    engine = "sqlite"

    def __init__(self) -> None:
        self.lock = threading.RLock()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        raise NotImplementedError

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        """Run ``sql`` for every row; returns the rows it changed (an insert that met a
        conflict and did nothing changed none)."""
        raise NotImplementedError

    @contextmanager
    def transaction(self) -> Iterator[None]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def size_bytes(self) -> int:
        raise NotImplementedError


class SQLiteDatabase(Database):
    """SQLite in WAL mode with ``synchronous=FULL``: a committed batch is on disk before
    the collector acknowledges it, and readers (the dashboard, queries) never block it."""

    engine = "sqlite"

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        if path.is_dir():
            raise StoreError(f"{path}: is a folder; the SQLite store is a file (e.g. monitor.db)")
        if not path.parent.exists():
            raise StoreError(f"{path}: its folder {path.parent} does not exist")
        try:
            self.conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False,
                                        timeout=30.0)  # fmt: skip
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.DatabaseError as error:
            raise StoreError(f"{path}: not a cofe monitoring store ({error})") from None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self.lock:
            return self.conn.execute(sql, tuple(params)).fetchall()

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        with self.lock:
            return self.conn.executemany(sql, rows).rowcount

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())


_PLACEHOLDER = re.compile(r"\?")


class PostgresDatabase(Database):
    """PostgreSQL through psycopg 3; the same SQL with ``%s`` placeholders."""

    engine = "postgresql"

    def __init__(self, dsn: str) -> None:
        super().__init__()
        try:
            import psycopg
        except ImportError:
            raise StoreError(
                'a PostgreSQL store needs psycopg: pip install "cofe[postgres]"'
            ) from None
        try:
            self.conn = psycopg.connect(dsn, autocommit=True)
        except psycopg.Error as error:
            raise StoreError(f"{shown_location(dsn)}: cannot connect to PostgreSQL "
                             f"({shown_location(str(error))})".strip()) from None
        self._in_transaction = False

    @staticmethod
    def _sql(sql: str) -> str:
        return _PLACEHOLDER.sub("%s", sql.replace("%", "%%"))

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self.lock:
            cursor = self.conn.execute(self._sql(sql), tuple(params))
            return cursor.fetchall() if cursor.description is not None else []

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        with self.lock, self.conn.cursor() as cursor:
            cursor.executemany(self._sql(sql), list(rows))
            return cursor.rowcount

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.lock, self.conn.transaction():
            yield

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def size_bytes(self) -> int:
        rows = self.execute("SELECT pg_database_size(current_database())")
        return int(rows[0][0])


def connect(location: str | Path) -> Database:
    """``postgresql://...`` (or ``postgres://``): PostgreSQL; anything else: a SQLite file."""
    text = str(location)
    if text.startswith(POSTGRES_SCHEMES):
        return PostgresDatabase(text)
    return SQLiteDatabase(Path(text))


def placeholders(n: int) -> str:
    return ", ".join("?" * n)


def in_slices(items: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    """Slices for ``IN (...)`` lists (SQLite caps the parameters of one statement)."""
    for at in range(0, len(items), size):
        yield items[at : at + size]
