"""Monitoring fixtures: a real PostgreSQL server, stores of both engines, span builders.

The PostgreSQL server is Debian's (``.ci/run`` installs the package): a throwaway
cluster is made with ``initdb`` in a temporary folder and started on a free loopback
port for the session. A machine without it fails these tests -- never skips them.
"""

from __future__ import annotations

import base64
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cofe.monitor import MonitorStore, Span
from cofe.testing import otlp_request

TRACE = "0af7651916cd43dd8448eb211c80319c"


def _pg_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """A throwaway PostgreSQL cluster on a free loopback port: ``start``, ``stop``
    (``immediate``: what a crash or a failover does to the clients) and ``start`` again on
    the same port and data."""

    def __init__(self) -> None:
        initdb, self.pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
        if not initdb or not self.pg_ctl:
            pytest.fail(
                "PostgreSQL is not installed (initdb/pg_ctl not found): the monitoring "
                "store's PostgreSQL tests need Debian's postgresql package, which "
                ".ci/run installs"
            )
        self.root = Path(tempfile.mkdtemp(prefix="cofe-pg-"))
        self.data = self.root / "data"
        self.prefix: list[str] = []
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root: run it as the postgres user
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self.port = _free_port()
        subprocess.run(
            [
                *self.prefix,
                initdb,
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
        )
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}"

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off"
        subprocess.run(
            [
                *self.prefix,
                self.pg_ctl,
                "-D",
                str(self.data),
                "-o",
                options,
                "-l",
                str(self.root / "log"),
                "-w",
                "start",
            ],
            check=True,
            capture_output=True,
        )

    def stop(self) -> None:
        subprocess.run(
            [*self.prefix, self.pg_ctl, "-D", str(self.data), "-m", "immediate", "stop"],
            capture_output=True,
        )

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A running PostgreSQL server for the session; yields its base URL (no database)."""
    server = PostgresServer()
    server.start()
    try:
        yield server.url
    finally:
        server.remove()


_databases = itertools.count()


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A new, empty database on the session's server."""
    import psycopg

    name = f"cofe_test_{os.getpid()}_{next(_databases)}"
    with psycopg.connect(f"{postgres_server}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{postgres_server}/{name}"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each store test runs on both engines."""
    if request.param == "sqlite":
        return str(tmp_path / "monitor.db")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def store(store_location: str) -> Iterator[MonitorStore]:
    with MonitorStore(store_location, window_seconds=60) as opened:
        yield opened


# --- span builders ---------------------------------------------------------------------------

T0 = 1_790_000_000_000_000_000  # a fixed start, in nanoseconds (2026-09-21)


def span(
    span_id: str,
    kind: str | None,
    *,
    parent: str | None = None,
    trace: str = TRACE,
    start: float = 0.0,
    seconds: float = 0.1,
    status: str = "ok",
    message: str = "",
    events: tuple = (),
    **attributes,
) -> Span:
    attrs = {k.replace("__", "."): v for k, v in attributes.items()}
    if kind is not None:
        attrs["openinference.span.kind"] = kind
    start_ns = T0 + int(start * 1e9)
    return Span(
        trace_id=trace,
        span_id=span_id.rjust(16, "0"),
        parent_id=parent.rjust(16, "0") if parent else None,
        name=f"{kind}-{span_id}",
        start_ns=start_ns,
        end_ns=start_ns + int(seconds * 1e9),
        status=status,
        status_message=message,
        attributes=attrs,
        events=events,
    )


def docs(prefix: str, texts: list[str], scores: list[float] | None = None) -> dict:
    out = {}
    for i, text in enumerate(texts):
        out[f"{prefix}.{i}.document.content"] = text
        out[f"{prefix}.{i}.document.id"] = f"node-{text[:6]}"
        if scores is not None:
            out[f"{prefix}.{i}.document.score"] = scores[i]
    return out


def rag_trace(
    query: str = "When was the tower finished?",
    pool: list[str] | None = None,
    context: list[str] | None = None,
    answer: str = "In 1889.",
    trace: str = TRACE,
    start: float = 0.0,
) -> list[Span]:
    """A query's spans as OpenInference instrumentation emits them: root chain, retriever
    (nested in an outer retriever), reranker, LLM (nested)."""
    pool = (
        pool
        if pool is not None
        else ["The tower was finished in 1889.", "Paris is a city.", "The Louvre is a museum."]
    )
    context = context if context is not None else pool[:2]
    scores = [1.0 - i / 10 for i in range(len(pool))]
    return [
        span(
            "1",
            "CHAIN",
            trace=trace,
            start=start,
            seconds=1.0,
            **{"input.value": query, "output.value": answer},
        ),
        span(
            "2",
            "RETRIEVER",
            parent="1",
            trace=trace,
            start=start + 0.01,
            seconds=0.2,
            **{"input.value": query},
            **docs("retrieval.documents", pool, scores),
        ),
        span(
            "3",
            "RETRIEVER",
            parent="2",
            trace=trace,
            start=start + 0.02,
            seconds=0.1,
            **docs("retrieval.documents", pool, scores),
        ),
        span(
            "4",
            "RERANKER",
            parent="1",
            trace=trace,
            start=start + 0.3,
            seconds=0.05,
            **docs("reranker.input_documents", pool, scores),
            **docs("reranker.output_documents", context, [0.9] * len(context)),
        ),
        span(
            "5",
            "LLM",
            parent="1",
            trace=trace,
            start=start + 0.4,
            seconds=0.5,
            **{
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": answer,
            },
        ),
        span(
            "6",
            "LLM",
            parent="5",
            trace=trace,
            start=start + 0.41,
            seconds=0.4,
            **{"output.value": "inner call"},
        ),
    ]


def otlp_json(spans: list[Span]) -> dict:
    """The spans in the OTLP/JSON mapping (hex ids, int64 as strings, integer enums)."""
    from google.protobuf.json_format import MessageToDict

    body = MessageToDict(otlp_request(spans), use_integers_for_enums=True)
    for resource in body["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for s in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in s:
                        s[key] = base64.b64decode(s[key]).hex()
    return body
