"""Monitoring ingest and query costs, SQLite against PostgreSQL.

    python benchmarks/monitor_ingest.py                      # 1M stored spans, both engines
    python benchmarks/monitor_ingest.py --spans 100000       # a smaller store
    python benchmarks/monitor_ingest.py --engines sqlite --json
    python benchmarks/monitor_ingest.py --parts ingest,contended  # the collector only
    python benchmarks/monitor_ingest.py --postgres postgresql://user@host:5432

Traffic is synthetic OpenInference RAG traces of 8 spans each, as LlamaIndex's
instrumentation emits them: a root CHAIN (the query and the answer), a RETRIEVER listing
a pool of 10 documents (id, score, ~500-character content, metadata) with an EMBEDDING
span inside, a RERANKER (the 10 in, 4 out), a synthesizing CHAIN with a prompt CHAIN and
the LLM call inside (its input messages carry the prompt: the 4 context chunks, ~2 KB)
and a post-processing CHAIN. Every document is drawn from one fixed set of 5,000
distinct chunk texts, so the store's content-addressed chunk table holds each text once.
Seeds are fixed.

(a) **ingest end to end**: a real ``cofe monitor collect`` process (default options:
windows refreshed every 10 s) on loopback; ``--senders`` threads POST pre-encoded OTLP
protobuf batches of ``--batch`` spans over kept-alive connections, each waiting for its
200 (which comes after the batch's transaction committed) before sending the next.
spans/s = spans acknowledged / time from the first request to the last answer.

(b) **a stored day**: a new store filled with ``--spans`` spans straight through
``store.traces.ingest`` (batches of ``--batch``; traces spread evenly over 24 hours),
its 288 five-minute windows computed (``refresh_windows``); then its size, and the time to read
one 5-minute window in the middle of the day: ``traces.started_in(start, end)`` (stage records;
with chunk texts too), ``window_rows`` (every signal of the window, what ``refresh``
computes per window), ``series`` (the day's stored series; one signal of it), and one
``traces.get(id)``. Query times are the median of 5 runs after one warm-up run.

(c) **contended**: the same batches through a collector that requires a token, from
``--contended-senders`` (8) authorised senders while ``--slow`` (50) connections without
the token each trickle a request a byte every 2 s (the collector's request deadline cuts
them); reported: spans/s and the senders' acknowledgement latency (p50, p95).

PostgreSQL is a throwaway server started for the run (``initdb`` in a temporary folder,
as ``postgres`` when run as root; a free loopback port) with its default settings --
``fsync`` and ``synchronous_commit`` on, as in production -- or the server given by
``--postgres`` (the script creates and drops its own databases there: the role needs
CREATEDB). SQLite is the store's own setting: WAL, ``synchronous=FULL``. Both stores
live in the same temporary folder (``--dir``), so on the same disk.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import http.client
import json
import os
import platform
import pwd
import random
import resource
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cofe.monitor import MonitorStore, Span, refresh_windows, window_rows  # noqa: E402
from cofe.testing import otlp_request, start_collector, trickle  # noqa: E402

SPANS_PER_TRACE = 8
POOL, CONTEXT, CHUNKS = 10, 4, 5000
DAY_NS = 24 * 3600 * 10**9
WINDOW_NS = 300 * 10**9


# --- synthetic OpenInference traffic ---------------------------------------------------------


def chunk_texts(n: int = CHUNKS, chars: int = 500, seed: int = 7) -> list[str]:
    """``n`` distinct texts of about ``chars`` characters from a fixed pseudo-vocabulary."""
    rng = random.Random(seed)
    syllables = [
        "ka",
        "lo",
        "mi",
        "ne",
        "ru",
        "sa",
        "te",
        "vo",
        "da",
        "pi",
        "gen",
        "tor",
        "al",
        "is",
        "um",
        "er",
        "on",
        "ba",
        "ce",
        "fi",
    ]
    words = sorted({"".join(rng.choices(syllables, k=rng.randint(1, 4))) for _ in range(6000)})
    out = []
    for i in range(n):
        parts, size = [f"Section {i}."], 0
        while size < chars:
            sentence = " ".join(rng.choices(words, k=rng.randint(6, 18))).capitalize() + "."
            parts.append(sentence)
            size += len(sentence) + 1
        out.append(" ".join(parts)[:chars])
    return out


SYSTEM = (
    "You are an expert Q&A system that is trusted around the world. Always answer the "
    "query using the provided context information, and not prior knowledge. Never "
    "directly reference the given context in your answer."
)


class Traffic:
    """Traces ``first, first + 1, ...`` starting at ``start_ns``, ``spacing_ns`` apart."""

    def __init__(self, texts: list[str], start_ns: int, spacing_ns: int, seed: int) -> None:
        self.texts, self.start_ns, self.spacing_ns = texts, start_ns, spacing_ns
        self.rng = random.Random(seed)

    def trace(self, i: int) -> list[Span]:
        rng = self.rng
        trace_id = f"{rng.getrandbits(128) | 1:032x}"
        ids = [f"{rng.getrandbits(64) | 1:016x}" for _ in range(SPANS_PER_TRACE)]
        t0 = self.start_ns + i * self.spacing_ns
        ms = 1_000_000
        query = f"What does section {rng.randrange(CHUNKS)} say about {rng.choice(['ka', 'lo', 'mi'])} #{i}?"
        pool = rng.sample(range(len(self.texts)), POOL)
        scores = sorted((round(rng.uniform(0.2, 0.95), 4) for _ in range(POOL)), reverse=True)
        kept = sorted(rng.sample(range(6), CONTEXT))  # the reranker keeps 4 of the top 6
        answer = " ".join(self.texts[pool[kept[0]]].split()[3:30]) + "."
        retrieve_ms, rerank_ms, llm_ms = (
            rng.randint(20, 200),
            rng.randint(30, 120),
            rng.randint(300, 2500),
        )
        total_ms = retrieve_ms + rerank_ms + llm_ms + 15

        def docs(
            prefix: str, chosen: list[int], with_scores: list[float], metadata: bool
        ) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for n, (c, score) in enumerate(zip(chosen, with_scores, strict=True)):
                out[f"{prefix}.{n}.document.id"] = f"node-{c:05d}"
                out[f"{prefix}.{n}.document.score"] = score
                out[f"{prefix}.{n}.document.content"] = self.texts[c]
                if metadata:
                    out[f"{prefix}.{n}.document.metadata"] = json.dumps(
                        {"file_name": f"doc-{c // 5:04d}.md", "chunk": c % 5}
                    )
            return out

        def span(
            n: int,
            parent: int | None,
            name: str,
            kind: str,
            start_ms: int,
            length_ms: int,
            **attributes: Any,
        ) -> Span:
            return Span(
                trace_id=trace_id,
                span_id=ids[n],
                parent_id=ids[parent] if parent is not None else None,
                name=name,
                start_ns=t0 + start_ms * ms,
                end_ns=t0 + (start_ms + length_ms) * ms,
                status="ok",
                status_message="",
                attributes={"openinference.span.kind": kind, **attributes},
            )

        context = [pool[k] for k in kept]
        prompt = (
            "Context information is below.\n---------------------\n"
            + "\n\n".join(self.texts[c] for c in context)
            + f"\n---------------------\nQuery: {query}\nAnswer: "
        )
        llm_start = retrieve_ms + rerank_ms + 10
        return [
            span(
                0,
                None,
                "RetrieverQueryEngine.query",
                "CHAIN",
                0,
                total_ms,
                **{"input.value": query, "output.value": answer},
            ),
            span(
                1,
                0,
                "VectorIndexRetriever.retrieve",
                "RETRIEVER",
                1,
                retrieve_ms,
                **{"input.value": query},
                **docs("retrieval.documents", pool, scores, metadata=True),
            ),
            span(
                2,
                1,
                "OpenAIEmbedding.get_query_embedding",
                "EMBEDDING",
                2,
                15,
                **{
                    "embedding.model_name": "text-embedding-3-small",
                    "embedding.embeddings.0.embedding.text": query,
                },
            ),
            span(
                3,
                0,
                "SentenceTransformerRerank.postprocess_nodes",
                "RERANKER",
                retrieve_ms + 2,
                rerank_ms,
                **{
                    "reranker.query": query,
                    "reranker.model_name": "cross-encoder/ms-marco-MiniLM-L-6-v2",
                    "reranker.top_k": CONTEXT,
                },
                **docs("reranker.input_documents", pool, scores, metadata=False),
                **docs(
                    "reranker.output_documents",
                    context,
                    [round(0.99 - k / 10, 4) for k in range(CONTEXT)],
                    metadata=False,
                ),
            ),
            span(
                4,
                0,
                "CompactAndRefine.synthesize",
                "CHAIN",
                llm_start - 4,
                llm_ms + 8,
                **{"input.value": query, "output.value": answer},
            ),
            span(
                5,
                4,
                "LLM.predict",
                "CHAIN",
                llm_start - 2,
                llm_ms + 3,
                **{"input.value": prompt[:200], "output.value": answer},
            ),
            span(
                6,
                5,
                "OpenAI.chat",
                "LLM",
                llm_start,
                llm_ms,
                **{
                    "llm.model_name": "gpt-4o-mini",
                    "llm.invocation_parameters": json.dumps(
                        {"temperature": 0.1, "max_tokens": 512}
                    ),
                    "llm.input_messages.0.message.role": "system",
                    "llm.input_messages.0.message.content": SYSTEM,
                    "llm.input_messages.1.message.role": "user",
                    "llm.input_messages.1.message.content": prompt,
                    "llm.output_messages.0.message.role": "assistant",
                    "llm.output_messages.0.message.content": answer,
                    "llm.token_count.prompt": len(prompt) // 4,
                    "llm.token_count.completion": len(answer) // 4,
                    "llm.token_count.total": (len(prompt) + len(answer)) // 4,
                },
            ),
            span(
                7,
                0,
                "MetadataReplacementPostProcessor.postprocess_nodes",
                "CHAIN",
                total_ms - 4,
                3,
                **{"input.value": query},
            ),
        ]

    def batches(self, spans: int, batch: int) -> Iterator[list[Span]]:
        """Batches of ``batch`` spans (whole traces: a batch is ``batch // 8`` traces)."""
        per_batch = max(1, batch // SPANS_PER_TRACE)
        traces = spans // SPANS_PER_TRACE
        for first in range(0, traces, per_batch):
            out: list[Span] = []
            for i in range(first, min(traces, first + per_batch)):
                out += self.trace(i)
            yield out


def encode(spans: list[Span]) -> bytes:
    """An OTLP ``ExportTraceServiceRequest`` in protobuf, as an SDK exporter POSTs it."""
    return otlp_request(spans).SerializeToString()


# --- PostgreSQL ------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def postgres_server(workdir: Path) -> Iterator[str]:
    """A throwaway PostgreSQL server with its default (durable) settings; its base URL."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    initdb = found[-1] if found else shutil.which("initdb")
    if not initdb:
        raise SystemExit("PostgreSQL's initdb is not installed (or pass --postgres URL)")
    pg_ctl = str(Path(initdb).with_name("pg_ctl"))
    root = Path(tempfile.mkdtemp(prefix="cofe-bench-pg-", dir=workdir))
    prefix: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    subprocess.run(
        [*prefix, initdb, "-D", str(root / "data"), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k {root}"
    subprocess.run(
        [
            *prefix,
            pg_ctl,
            "-D",
            str(root / "data"),
            "-o",
            options,
            "-l",
            str(root / "log"),
            "-w",
            "start",
        ],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run(
            [*prefix, pg_ctl, "-D", str(root / "data"), "-m", "fast", "stop"], capture_output=True
        )
        shutil.rmtree(root, ignore_errors=True)


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))


@contextlib.contextmanager
def new_database(server: str, name: str) -> Iterator[str]:
    import psycopg

    name = f"{name}_{os.getpid()}"
    with psycopg.connect(_with_database(server, "postgres"), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield _with_database(server, name)
    finally:
        with psycopg.connect(_with_database(server, "postgres"), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def postgres_settings(url: str) -> str:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = dict(
            conn.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN "
                "('fsync', 'synchronous_commit', 'shared_buffers', "
                "'server_version')"
            ).fetchall()
        )
    return (
        f"PostgreSQL {rows['server_version']}, fsync={rows['fsync']}, "
        f"synchronous_commit={rows['synchronous_commit']}, "
        f"shared_buffers={int(rows['shared_buffers']) * 8 // 1024} MB"
    )


# --- (a) ingest end to end -------------------------------------------------------------------


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def ingest_end_to_end(
    engine: str,
    location: str,
    bodies: list[tuple[bytes, int]],
    senders: int,
    refresh: float,
    *,
    slow: int = 0,
    token_file: Path | None = None,
) -> dict[str, Any]:
    """``slow``: connections trickling a request without the token meanwhile (opened a
    second before the senders start); ``token_file``: the collector requires its token,
    which the senders give."""
    port = _free_port()
    cpu_before = _children_cpu()
    options = ["--refresh", str(refresh)]
    headers = {"Content-Type": "application/x-protobuf"}
    if token_file is not None:
        options += ["--token-file", str(token_file)]
        headers["Authorization"] = f"Bearer {token_file.read_text().strip()}"
    try:
        process = start_collector(location, port, *options, cwd=str(ROOT))
    except RuntimeError as error:
        raise SystemExit(str(error)) from None
    stop, closed = threading.Event(), [0]
    trickling = [
        threading.Thread(target=trickle, args=(port, stop, closed), daemon=True)
        for _ in range(slow)
    ]
    for thread in trickling:
        thread.start()
    if slow:
        time.sleep(1.0)
    try:
        queue = list(range(len(bodies)))
        lock = threading.Lock()
        latencies: list[float] = []
        failures: list[str] = []

        def work() -> None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            while True:
                with lock:
                    if not queue:
                        break
                    n = queue.pop(0)
                began = time.perf_counter()
                try:
                    conn.request("POST", "/v1/traces", body=bodies[n][0], headers=headers)
                    response = conn.getresponse()
                    response.read()
                    status = response.status
                except (OSError, http.client.HTTPException) as error:
                    status = type(error).__name__
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
                with lock:
                    if status == 200:
                        latencies.append(time.perf_counter() - began)
                    else:
                        failures.append(str(status))
            conn.close()

        threads = [threading.Thread(target=work) for _ in range(senders)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - started
    finally:
        stop.set()
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=600)
    collector_cpu = _children_cpu() - cpu_before
    spans = sum(n for _, n in bodies)
    with MonitorStore(location) as store:
        counts = store.counts()
        size = store.size_bytes()
    if failures or counts["spans"] != spans:
        raise SystemExit(
            f"{engine}: {len(failures)} batches failed ({failures[:5]}), "
            f"{counts['spans']:,} of {spans:,} spans stored\n{err[-2000:]}"
        )
    ordered = sorted(latencies)
    return {
        "part": "ingest",
        "engine": engine,
        "spans": spans,
        "batches": len(bodies),
        "batch_spans": bodies[0][1],
        "senders": senders,
        "refresh_s": refresh,
        "body_mb": round(sum(len(b) for b, _ in bodies) / len(bodies) / 2**20, 2),
        "wall_s": round(wall, 1),
        "spans_per_s": round(spans / wall),
        "batch_p50_ms": round(1000 * ordered[len(ordered) // 2]),
        "batch_p95_ms": round(1000 * ordered[int(len(ordered) * 0.95)]),
        "collector_cpu_s": round(collector_cpu, 1),
        "traces": counts["traces"],
        "chunks": counts["chunks"],
        "store_mb": round(size / 2**20, 1),
        "slow": slow,
        "token": token_file is not None,
    }


def decode_rate(bodies: list[tuple[bytes, int]]) -> int:
    from cofe.monitor import spans_from_protobuf

    began = time.perf_counter()
    spans = sum(len(spans_from_protobuf(body)) for body, _ in bodies)
    return round(spans / (time.perf_counter() - began))


# --- (b) a stored day ------------------------------------------------------------------------


def _timed(run: Callable[[], Any], repeat: int = 5) -> tuple[float, Any]:
    """Median seconds of ``repeat`` runs after a warm-up run, and the last result."""
    result = run()
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - began)
    return statistics.median(times), result


def stored_day(
    engine: str, location: str, spans: int, batch: int, texts: list[str], end_ns: int
) -> dict[str, Any]:
    traces = spans // SPANS_PER_TRACE
    start_ns = end_ns - DAY_NS
    traffic = Traffic(texts, start_ns, DAY_NS // traces, seed=2)
    with MonitorStore(location) as store:
        began = time.perf_counter()
        done = 0
        for group in traffic.batches(spans, batch):
            store.traces.ingest(group)
            done += len(group)
            if done % 100_000 < len(group):
                rate = done / (time.perf_counter() - began)
                print(
                    f"  {engine}: {done:,} spans stored ({rate:,.0f}/s)",
                    file=sys.stderr,
                    flush=True,
                )
        fill = time.perf_counter() - began
        began = time.perf_counter()
        windows = refresh_windows(store)
        refresh = time.perf_counter() - began
        if engine == "sqlite":
            store.checkpoint()
        size = store.size_bytes()
        tables = table_sizes(store)
        counts = store.counts()

        middle = store.window_of(start_ns + DAY_NS // 2)
        window = (middle, middle + WINDOW_NS)
        t_traces, records = _timed(lambda: store.traces.started_in(*window))
        t_text, _ = _timed(lambda: store.traces.started_in(*window, with_text=True))
        t_rows, rows = _timed(lambda: window_rows(store, "traffic", *window))
        t_series, series = _timed(lambda: store.windows.series(since_ns=start_ns, until_ns=end_ns))
        t_signal, one = _timed(
            lambda: store.windows.series(
                since_ns=start_ns, until_ns=end_ns, stage="retrieval", signal="PoolSize"
            )
        )
        some = records[len(records) // 2].trace_id
        t_trace, record = _timed(lambda: store.traces.get(some))
    assert counts["spans"] == traces * SPANS_PER_TRACE and record.problems == [], counts
    return {
        "part": "store",
        "engine": engine,
        "spans": counts["spans"],
        "traces": counts["traces"],
        "chunks": counts["chunks"],
        "windows": windows,
        "series_rows": len(series),
        "fill_s": round(fill, 1),
        "fill_spans_per_s": round(counts["spans"] / fill),
        "refresh_s": round(refresh, 1),
        "size_mb": round(size / 2**20, 1),
        "bytes_per_span": round(size / counts["spans"]),
        "window_traces": len(records),
        "table_mb": {t: round(b / 2**20, 1) for t, b in tables.items()},
        "traces_ms": round(1000 * t_traces, 1),
        "traces_text_ms": round(1000 * t_text, 1),
        "window_rows_ms": round(1000 * t_rows, 1),
        "window_rows": len(rows),
        "series_day_ms": round(1000 * t_series, 1),
        "series_signal_ms": round(1000 * t_signal, 2),
        "signal_rows": len(one),
        "trace_ms": round(1000 * t_trace, 2),
    }


def table_sizes(store: MonitorStore) -> dict[str, int]:
    """Bytes per table, its indexes included."""
    tables = ("spans", "traces", "chunks", "series")
    if store.db.engine == "sqlite":
        owner = dict(store.db.execute("SELECT name, tbl_name FROM sqlite_master"))
        out = dict.fromkeys(tables, 0)
        for name, size in store.db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"):
            table = owner.get(name, name)
            if table in out:
                out[table] += int(size)
        return out
    return {t: int(store.db.execute("SELECT pg_total_relation_size(?)", [t])[0][0]) for t in tables}


# --- output ----------------------------------------------------------------------------------


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    def cell(v: Any) -> str:
        return f"{v:,}" if isinstance(v, int) else str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--spans",
        type=int,
        default=1_000_000,
        help="spans in the stored day, part (b) (default 1,000,000)",
    )
    parser.add_argument(
        "--ingest-spans",
        type=int,
        default=131_072,
        help="spans sent through the collector, part (a) (default 131,072)",
    )
    parser.add_argument("--batch", type=int, default=512, help="spans per batch (default 512)")
    parser.add_argument("--senders", type=int, default=4, help="concurrent senders (default 4)")
    parser.add_argument(
        "--refresh",
        type=float,
        default=10.0,
        help="the collector's --refresh, seconds between window updates "
        "(default 10, its own default)",
    )
    parser.add_argument(
        "--contended-senders",
        type=int,
        default=8,
        help="authorised senders in part (c) (default 8)",
    )
    parser.add_argument(
        "--slow",
        type=int,
        default=50,
        help="slow connections without the token in part (c) (default 50)",
    )
    parser.add_argument("--engines", default="sqlite,postgresql")
    parser.add_argument(
        "--parts",
        default="ingest,contended,store",
        help="any of ingest, contended, store (default: all three)",
    )
    parser.add_argument(
        "--postgres",
        metavar="URL",
        help="a PostgreSQL server to use (its databases are made and dropped "
        "by the script) instead of a throwaway one",
    )
    parser.add_argument("--dir", type=Path, help="folder for the stores (default: a temporary one)")
    parser.add_argument("--json", action="store_true", help="JSON lines instead of tables")
    args = parser.parse_args()
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    parts = {p.strip() for p in args.parts.split(",")}

    texts = chunk_texts()
    workdir = Path(tempfile.mkdtemp(prefix="cofe-bench-monitor-", dir=args.dir))
    os.chmod(workdir, 0o755)
    results: list[dict[str, Any]] = []
    notes = [
        f"cpus: {os.cpu_count()}, python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version} (WAL, synchronous=FULL), stores in {workdir}"
    ]
    try:
        with contextlib.ExitStack() as stack:
            server = None
            if "postgresql" in engines:
                server = args.postgres or stack.enter_context(postgres_server(workdir))

            def location(engine: str, name: str) -> str:
                if engine == "sqlite":
                    return str(workdir / f"{name}.db")
                assert server is not None
                return stack.enter_context(new_database(server, f"cofe_bench_{name}"))

            if "postgresql" in engines:
                notes.append(
                    postgres_settings(_with_database(server, "postgres"))
                    + (
                        ""
                        if args.postgres
                        else " (a throwaway server on loopback, default settings)"
                    )
                )
            if parts & {"ingest", "contended"}:
                now = time.time_ns()
                traffic = Traffic(texts, now, 2 * 10**6, seed=1)  # 500 traces/s of "now"
                began = time.perf_counter()
                bodies = [
                    (encode(group), len(group))
                    for group in traffic.batches(args.ingest_spans, args.batch)
                ]
                print(
                    f"encoded {len(bodies)} batches in {time.perf_counter() - began:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
                notes.append(
                    f"decoding alone (spans_from_protobuf, in process): "
                    f"{decode_rate(bodies[:32]):,} spans/s"
                )
                for engine in engines if "ingest" in parts else []:
                    result = ingest_end_to_end(
                        engine, location(engine, "ingest"), bodies, args.senders, args.refresh
                    )
                    print(json.dumps(result), file=sys.stderr, flush=True)
                    results.append(result)
                if "contended" in parts:
                    token_file = workdir / "token"
                    token_file.write_text("bench-" + os.urandom(8).hex())
                    for engine in engines:
                        result = ingest_end_to_end(
                            engine,
                            location(engine, "contended"),
                            bodies,
                            args.contended_senders,
                            args.refresh,
                            slow=args.slow,
                            token_file=token_file,
                        )
                        result["part"] = "contended"
                        print(json.dumps(result), file=sys.stderr, flush=True)
                        results.append(result)
                del bodies
            if "store" in parts:
                end_ns = time.time_ns() - 3600 * 10**9
                end_ns -= end_ns % WINDOW_NS
                for engine in engines:
                    result = stored_day(
                        engine, location(engine, "day"), args.spans, args.batch, texts, end_ns
                    )
                    print(json.dumps(result), file=sys.stderr, flush=True)
                    results.append(result)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    if args.json:
        for result in results:
            print(json.dumps(result))
        return
    print("\n".join(f"- {n}" for n in notes))
    ingest = [r for r in results if r["part"] == "ingest"]
    if ingest:
        print(
            f"\n(a) `cofe monitor collect` on loopback: OTLP protobuf batches of "
            f"{ingest[0]['batch_spans']} spans ({ingest[0]['body_mb']} MB each), "
            f"{ingest[0]['senders']} senders, windows refreshed every "
            f"{ingest[0]['refresh_s']:g} s\n"
        )
        print(
            _table(
                [
                    "store",
                    "spans",
                    "wall",
                    "spans/s",
                    "batch p50 / p95",
                    "collector CPU",
                    "traces",
                    "chunks",
                    "store size",
                ],
                [
                    [
                        r["engine"],
                        r["spans"],
                        f"{r['wall_s']} s",
                        r["spans_per_s"],
                        f"{r['batch_p50_ms']} / {r['batch_p95_ms']} ms",
                        f"{r['collector_cpu_s']} s",
                        r["traces"],
                        r["chunks"],
                        f"{r['store_mb']:,} MB",
                    ]
                    for r in ingest
                ],
            )
        )
    store = [r for r in results if r["part"] == "store"]
    if store:
        print(
            f"\n(b) a day of {store[0]['spans']:,} spans ({store[0]['traces']:,} traces, "
            f"{store[0]['windows']} windows of 5 min); one 5-minute window of "
            f"{store[0]['window_traces']} traces read (median of 5)\n"
        )
        print(
            _table(
                [
                    "store",
                    "fill (ingest, in process)",
                    "refresh all windows",
                    "size",
                    "spans / traces / chunks / series",
                    "bytes/span",
                    "traces(5 min)",
                    "… with texts",
                    "window_rows",
                    "series (day)",
                    "series (1 signal)",
                    "trace(id)",
                ],
                [
                    [
                        r["engine"],
                        f"{r['fill_s']} s ({r['fill_spans_per_s']:,} spans/s)",
                        f"{r['refresh_s']} s",
                        f"{r['size_mb']:,} MB",
                        " / ".join(f"{v:,}" for v in r["table_mb"].values()) + " MB",
                        r["bytes_per_span"],
                        f"{r['traces_ms']} ms",
                        f"{r['traces_text_ms']} ms",
                        f"{r['window_rows_ms']} ms",
                        f"{r['series_day_ms']} ms ({r['series_rows']:,} rows)",
                        f"{r['series_signal_ms']} ms",
                        f"{r['trace_ms']} ms",
                    ]
                    for r in store
                ],
            )
        )

    contended = [r for r in results if r["part"] == "contended"]
    if contended:
        print(
            f"\n(c) the same batches with a token: {contended[0]['senders']} authorised "
            f"senders while {contended[0]['slow']} connections without the token trickle a "
            "request a byte every 2 s\n"
        )
        print(
            _table(
                ["store", "spans", "wall", "spans/s", "ack p50 / p95", "collector CPU"],
                [
                    [
                        r["engine"],
                        r["spans"],
                        f"{r['wall_s']} s",
                        r["spans_per_s"],
                        f"{r['batch_p50_ms']} / {r['batch_p95_ms']} ms",
                        f"{r['collector_cpu_s']} s",
                    ]
                    for r in contended
                ],
            )
        )


if __name__ == "__main__":
    main()
