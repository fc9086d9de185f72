"""The store's schema versions, and the steps between them (SQLAlchemy-native).

``cofe_meta.schema_version`` says which version a store is at. A new store is made at
version 1 and migrated like an old one, so every store went through the same steps; a
store written by a newer cofe is refused. Each step runs in one transaction, under a
PostgreSQL advisory lock: of two processes opening an old store at once, one migrates and
the other finds it done.

Why not Alembic: these stores are made and migrated at run time by whatever command opens
them first (``collect``, ``import``, ``status``), with no migration scripts folder or
configuration to ship, and they already carry their version in ``cofe_meta`` (stores made
before SQLAlchemy included). Each step here is a few lines of SQLAlchemy DDL
(``Table.create``); Alembic's revision graph, autogeneration and ``alembic_version``
table would add a second record of the version and a deployment step for nothing these
steps need.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from cofe.monitor.store import _tables as t

STORE_SCHEMA_VERSION = 4


def _create(*tables: sa.Table) -> Callable[[Connection], None]:
    def step(connection: Connection) -> None:
        for table in tables:
            table.create(connection)

    return step


MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    0: _create(*t.VERSION_1),  # a new store
    1: _create(t.alerts),  # 2: alerts fired by ``cofe monitor alerts``
    2: _create(t.canary_scores),  # 3: every canary sample's measure values
    3: _create(t.judge_gates),  # 4: what a judge's known-answer controls said
}
"""``{version: step}`` taking a store from ``version`` to ``version + 1``."""


def lock_schema(connection: Connection) -> None:
    """PostgreSQL: one process makes or migrates the store at a time (until commit)."""
    if connection.dialect.name == "postgresql":
        connection.execute(sa.select(sa.func.pg_advisory_xact_lock(sa.func.hashtext("cofe store"))))


def tables_present(connection: Connection) -> set[str]:
    return set(sa.inspect(connection).get_table_names())


def stored_version(connection: Connection) -> int:
    value = connection.scalar(sa.select(t.meta.c.value).where(t.meta.c.key == "schema_version"))
    return int(value) if value is not None else 0


def set_version(connection: Connection, version: int) -> None:
    connection.execute(
        t.meta.update().where(t.meta.c.key == "schema_version").values(value=str(version))
    )
