"""The dashboard (``cofe monitor serve``) in a real headless Chromium, on both engines.

A store is filled as production fills it: traffic traces over several windows (spans
ingested, windows computed), canary rounds of a small pipeline (``run_canary``) and alert
rows; then the dashboard serves it from a thread and the browser reads it: the page
loads clean and fetches nothing else, charts draw a point per window and per round, a
click on a point opens that window's traces or that round's cases, markup in trace text
runs nothing, and the token, the binding, the methods and read-only access hold.
"""

from __future__ import annotations

import http.client
import itertools
import json
import os
import random
import socket
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from cofe import Chunk, EvalSample
from cofe.adapters import PythonPipeline
from cofe.evalset import write_evalset
from cofe.monitor import MonitorStore, refresh_windows, run_canary
from cofe.monitor.store import StoreError
from cofe.monitor.web._dashboard import CSP, Dashboard, open_read_only
from tests.monitor.conftest import T0, docs, span

WINDOW_S = 300
WINDOW = WINDOW_S * 10**9
BASE = T0 - T0 % WINDOW  # the start of a window
TOKEN = "dash-T0ken-7a1c9e"
IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"
ALERT_MESSAGE = f"LatencyP95 0.21 -> 1.3 <b>up</b> {IMG}"

TOPICS = [
    (
        "When was the Eiffel Tower finished?",
        "The Eiffel Tower was finished in 1889 for the World's Fair.",
        "It was finished in 1889.",
    ),
    (
        "What is the capital of Germany?",
        "Berlin is the capital and largest city of Germany.",
        "Berlin.",
    ),
    (
        "How many spectators did the Colosseum hold?",
        "The Colosseum could hold an estimated 50,000 spectators.",
        "About 50,000 spectators.",
    ),
    (
        "Who painted the Mona Lisa?",
        "The Mona Lisa was painted by Leonardo da Vinci.",
        "Leonardo da Vinci.",
    ),
    (
        "How long is the Danube?",
        "The Danube is about 2,850 km long, Europe's second-longest river.",
        "About 2,850 km.",
    ),
    (
        "When did the Berlin Wall fall?",
        "The Berlin Wall fell on 9 November 1989.",
        "On 9 November 1989.",
    ),
]
FILLER = [
    "Paris is the capital of France.",
    "The Louvre is the world's most-visited museum.",
    "Rome was founded, by legend, in 753 BC.",
    "Vienna lies on the Danube.",
    "The Alps stretch across eight countries.",
]


# --- filling a store ---------------------------------------------------------------------------


def trace_spans(
    trace: str,
    at: float,
    query: str,
    pool: list[str],
    context: list[str],
    answer: str | None,
    *,
    retrieve_s: float = 0.2,
    rerank_s: float = 0.05,
    llm_s: float = 0.6,
    error: str | None = None,
    listed: bool = True,
) -> list:
    """One query's OpenInference spans (root chain, retriever, reranker, LLM) at ``at``
    seconds after T0; ``error``: the stage whose span failed; ``listed=False``: the
    retriever lists no documents (a trace with a problem)."""
    scores = [round(0.92 - 0.06 * i, 3) for i in range(len(pool))]
    total = retrieve_s + rerank_s + llm_s + 0.03
    spans = [
        span(
            "1",
            "CHAIN",
            trace=trace,
            start=at,
            seconds=total,
            status="error" if error else "ok",
            **{"input.value": query},
        ),
        span(
            "2",
            "RETRIEVER",
            parent="1",
            trace=trace,
            start=at + 0.01,
            seconds=retrieve_s,
            status="error" if error == "retrieval" else "ok",
            message="TimeoutError: vector store did not answer" if error == "retrieval" else "",
            **{"input.value": query},
            **(docs("retrieval.documents", pool, scores) if listed else {}),
        ),
    ]
    if error == "retrieval":
        return spans
    spans.append(
        span(
            "3",
            "RERANKER",
            parent="1",
            trace=trace,
            start=at + 0.01 + retrieve_s,
            seconds=rerank_s,
            **docs("reranker.input_documents", pool, scores),
            **docs(
                "reranker.output_documents", context, [0.9 - 0.1 * i for i in range(len(context))]
            ),
        )
    )
    llm = (
        {
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": answer,
        }
        if answer is not None
        else {}
    )
    spans.append(
        span(
            "4",
            "LLM",
            parent="1",
            trace=trace,
            start=at + 0.02 + retrieve_s + rerank_s,
            seconds=llm_s,
            status="error" if error == "generation" else "ok",
            message="RateLimitError: 429 from the LLM" if error == "generation" else "",
            **llm,
        )
    )
    return spans


def window_at(index: int) -> int:
    return BASE + index * WINDOW


def _seconds(ns: int) -> float:
    return (ns - T0) / 1e9


_ids = itertools.count(1)


def traffic(
    store: MonitorStore,
    windows: dict[int, int],
    *,
    seed: int = 7,
    degraded: frozenset[int] = frozenset(),
) -> dict[int, list[str]]:
    """``windows[i]`` traces in window ``i``; in ``degraded`` windows the retriever is slow
    and the reranker drops the pool's first chunk. Returns each window's queries."""
    rng = random.Random(seed)
    queries: dict[int, list[str]] = {}
    for w, n in sorted(windows.items()):
        for j in range(n):
            query, good, answer = TOPICS[(w + j) % len(TOPICS)]
            pool = [good, *rng.sample(FILLER, 3)]
            context = pool[:2]
            slow = w in degraded
            if slow and j % 2 == 0:
                context = pool[1:3]  # the reranker drops the chunk that holds the answer
                answer = "I don't know based on the context."
            at = _seconds(window_at(w)) + 5 + j * (WINDOW_S - 10) / max(n, 1)
            trace = f"{next(_ids):032x}"
            store.traces.ingest(
                trace_spans(
                    trace,
                    at,
                    f"{query}",
                    pool,
                    context,
                    answer,
                    retrieve_s=rng.uniform(0.9, 1.6) if slow else rng.uniform(0.12, 0.3),
                    rerank_s=rng.uniform(0.03, 0.08),
                    llm_s=rng.uniform(0.4, 0.9),
                )
            )
            queries.setdefault(w, []).append(query)
    return queries


CANARY_CHUNKS = {f"c{i}": text for i, (_, text, _) in enumerate(TOPICS, start=1)}
CANARY_CHUNKS["c1"] += f" {SCRIPT}"  # markup in a chunk a canary case shows
CANARY_CHUNKS.update({f"f{i}": text for i, text in enumerate(FILLER, start=1)})


def canary_rounds(
    store: MonitorStore, folder: Path, starts: list[int], degraded: frozenset[int] = frozenset()
) -> list[str]:
    """A canary round at each of ``starts`` (ns) through a small pipeline; in ``degraded``
    rounds its reranker keeps the wrong chunk for half the queries."""
    samples = [
        EvalSample(
            id=f"q{i}",
            query=q,
            coarse_keywords=[q.split()[-1].rstrip("?")],
            fine_keywords=[[a.rstrip(".").split()[-1]]],
            reference_answer=a,
        )
        for i, (q, _, a) in enumerate(TOPICS, start=1)
    ]
    samples[5] = EvalSample(
        id="q6",
        query=TOPICS[5][0],
        coarse_keywords=["Berlin Wall"],
        fine_keywords=[["1989"]],
        reference_answer="1989",
    )
    evalset = folder / "canary.jsonl"
    write_evalset(evalset, samples)
    by_query = {q: f"c{i}" for i, (q, _, _) in enumerate(TOPICS, start=1)}
    state = {"round": 0}

    def retrieve(query: str) -> list[str]:
        if query == TOPICS[2][0]:
            return ["f1", "f2", "f3"]  # the retriever misses it: not_retrieved
        return [by_query[query], "f1", "f4"]

    def rerank(query: str, candidates: list[Chunk]) -> list[Chunk]:
        bad = state["round"] in degraded and int(by_query[query][1:]) % 2 == 1
        return candidates[1:2] if bad else candidates[:1]

    pipeline = PythonPipeline(
        chunks=[Chunk(chunk_id=c, doc_id="d", text=t) for c, t in CANARY_CHUNKS.items()],
        retrieve=retrieve,
        rerank=rerank,
        generate=lambda q, ctx: f"From the context: {ctx[0].text}" if ctx else "I don't know.",
        top_k=1,
    )
    ids = []
    for i, start in enumerate(starts):
        state["round"] = i
        clock = iter([start, start + 2_400_000_000])
        done = run_canary(
            store, evalset, folder / "rounds", pipeline=pipeline, now_ns=clock.__next__
        )
        ids.append(done.round_id)
    return ids


def add_alert(store: MonitorStore, alert_id: str, **fields) -> None:
    row = {
        "alert_id": alert_id,
        "rule": "traffic retrieval LatencyP95",
        "fired_ns": BASE,
        "origin": "traffic",
        "stage": "retrieval",
        "measure": "LatencyP95",
        "severity": "warning",
        "window_start_ns": BASE,
        "window_end_ns": BASE + WINDOW,
        "baseline": 0.21,
        "current": 1.3,
        "ci_low": 0.8,
        "ci_high": 1.4,
        "p_value": 0.0004,
        "message": ALERT_MESSAGE,
        "examples": "[]",
        "delivered": "{}",
        **fields,
    }
    with store.db.transaction():
        store.db.execute(
            f"INSERT INTO alerts ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            list(row.values()),
        )


TRAFFIC_WINDOWS = {0: 3, 1: 2, 2: 4, 4: 1, 5: 3}  # window 3 had no traffic: the line breaks
INJECTED_WINDOW = 2


def fill(location: str, folder: Path) -> dict:
    """The tests' store: five traffic windows (one trace with markup everywhere, one whose
    retriever failed, one with no documents listed, one not a query), two canary rounds
    (the second with a reranker that drops the evidence) and two alerts."""
    with MonitorStore(location, window_seconds=WINDOW_S) as store:
        queries = traffic(store, TRAFFIC_WINDOWS, degraded=frozenset({5}))
        at = _seconds(window_at(INJECTED_WINDOW)) + 250
        store.traces.ingest(
            trace_spans(
                "e" * 32,
                at,
                f"Who built it? {IMG}",
                [f"Gustave Eiffel's company built it. {SCRIPT}", "Paris."],
                [f"Gustave Eiffel's company built it. {SCRIPT}"],
                f"Eiffel's company {IMG} built it.",
            )
        )
        queries[INJECTED_WINDOW].append(f"Who built it? {IMG}")
        store.traces.ingest(
            trace_spans(
                "f" * 32, at + 10, "Is the vector store up?", [], [], None, error="retrieval"
            )
        )
        queries[INJECTED_WINDOW].append("Is the vector store up?")
        store.traces.ingest(
            trace_spans(
                "d" * 32,
                _seconds(window_at(1)) + 200,
                "Which river flows through Vienna?",
                ["The Danube flows through Vienna."],
                ["The Danube flows through Vienna."],
                "The Danube.",
                listed=False,
            )
        )
        queries[1].append("Which river flows through Vienna?")
        store.traces.ingest(
            [span("1", "EMBEDDING", trace="c" * 32, start=_seconds(window_at(4)) + 100)]
        )
        rounds = canary_rounds(
            store,
            folder,
            [window_at(1) + 30 * 10**9, window_at(5) + 30 * 10**9],
            degraded=frozenset({1}),
        )
        refresh_windows(store)
        example = store.traces.started_in(window_at(5), window_at(6))[0]
        add_alert(
            store,
            "a1",
            fired_ns=window_at(6) + 10**9,
            window_start_ns=window_at(5),
            window_end_ns=window_at(6),
            examples=json.dumps(
                [
                    {
                        "trace_id": example.trace_id,
                        "query": example.query,
                        "LatencyP95": 1.3,
                        "answer": f"x {IMG}",
                    }
                ]
            ),
        )
        cases = store.db.execute(
            "SELECT sample_id, trace_id, query, verdict, stage FROM "
            "canary_cases WHERE round_id = ? AND verdict = 'cut_by_rerank'",
            [rounds[1]],
        )
        add_alert(
            store,
            "a2",
            rule="canary lost@reranking",
            origin="canary",
            stage="reranking",
            measure="lost@reranking",
            severity="critical",
            fired_ns=window_at(6),
            window_start_ns=window_at(5) + 30 * 10**9,
            window_end_ns=window_at(5) + 32_400_000_000,
            baseline=0.0,
            current=0.5,
            ci_low=0.2,
            ci_high=0.8,
            p_value=0.004,
            message="lost@reranking 0 -> 0.5 (+0.5)",
            examples=json.dumps(
                [
                    {
                        "round_id": rounds[1],
                        "sample_id": c[0],
                        "trace_id": c[1],
                        "query": c[2],
                        "verdict": c[3],
                        "stage": c[4],
                    }
                    for c in cases
                ]
            ),
        )
        verdicts = store.canaries.series()
    return {"location": location, "queries": queries, "rounds": rounds, "canary": verdicts}


# --- fixtures ------------------------------------------------------------------------------------


def _new_postgres_database(server: str) -> str:
    import psycopg

    name = f"cofe_dash_{os.getpid()}_{next(_ids)}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"{server}/{name}"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def filled(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    folder = tmp_path_factory.mktemp(f"dash-{request.param}")
    if request.param == "sqlite":
        location = str(folder / "monitor.db")
    else:
        location = _new_postgres_database(request.getfixturevalue("postgres_server"))
    return fill(location, folder)


@contextmanager
def serving(location: str, **options) -> Iterator[Dashboard]:
    dashboard = Dashboard(location, port=0, **options)
    dashboard.start()
    try:
        yield dashboard
    finally:
        dashboard.shutdown()


@pytest.fixture(scope="module")
def dashboard(filled: dict) -> Iterator[Dashboard]:
    with serving(filled["location"]) as running:
        yield running


class Opened:
    """A page with what it logged, raised, asked and fetched."""

    def __init__(self, browser, url: str, context=None) -> None:
        self.context = context or browser.new_context()
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.response = self.page.goto(url)
        self.page.wait_for_load_state("load")

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def opened(browser) -> Iterator:
    pages: list[Opened] = []

    def open_(url: str, context=None) -> Opened:
        pages.append(Opened(browser, url, context))
        return pages[-1]

    yield open_
    for p in pages:
        p.close()


def request(
    dashboard: Dashboard,
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", dashboard.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


# --- the page, its charts and the drill-down ----------------------------------------------------------


def test_the_overview_loads_with_no_console_error_and_fetches_nothing_else(dashboard, opened):
    view = opened(dashboard.url)
    assert view.response.status == 200
    assert view.response.headers["content-security-policy"] == CSP
    assert "script-src" not in CSP and "default-src 'none'" in CSP  # no script may run at all
    assert view.errors == []
    assert view.page.locator("script").count() == 0
    assert view.page.locator("link[rel=stylesheet]").count() == 1
    assert (
        view.page.evaluate("getComputedStyle(document.querySelector('header')).backgroundColor")
        == "rgb(26, 54, 93)"
    )  # the stylesheet (same origin) applied
    root = dashboard.url.rstrip("/")
    assert view.requests and all(u.startswith(root + "/") for u in view.requests), view.requests
    assert any(u.endswith("/static/dashboard.css") for u in view.requests)


def test_charts_draw_a_point_per_window_and_per_round(dashboard, filled, opened):
    page = opened(dashboard.url).page
    charts = page.locator("svg.chart")
    assert charts.count() >= 20
    for i in range(charts.count()):
        box = charts.nth(i).bounding_box()
        assert box and box["width"] > 0 and box["height"] > 0
    traces = page.locator("#chart-traffic-all-Traces")
    assert traces.locator("circle.pt").count() == len(TRAFFIC_WINDOWS)
    assert traces.locator("polyline.series").count() == 2  # windows 0-2 and 4-5: no bridge
    titles = traces.locator("circle.pt title").evaluate_all("ts => ts.map(t => t.textContent)")
    expected = [
        n + (2 if w == INJECTED_WINDOW else 1 if w == 1 else 0)
        for w, n in sorted(TRAFFIC_WINDOWS.items())
    ]
    assert [int(t.split(": ")[1].split(" ")[0]) for t in titles] == expected
    latency = page.locator("#chart-traffic-retrieval-Latency")  # p50 and p95 in one chart
    assert latency.locator("circle.pt").count() == 2 * len(TRAFFIC_WINDOWS)
    assert latency.locator("path.alert-mark").count() == 1  # the alert on retrieval LatencyP95
    # canaries: KeywordRecall at corpus, pool, context and answer for each of the two rounds
    recall = page.locator("#chart-canary-recall")
    steps = {r["step"] for r in filled["canary"] if r["measure"].startswith("KeywordRecall")}
    assert steps == {"corpus", "pool", "context", "answer"}
    assert recall.locator("circle.pt").count() == 2 * len(steps)
    # verdict shares: a point per verdict and round, 0 % where a round had none of it
    shares = {r["measure"] for r in filled["canary"] if r["step"] == "verdicts"}
    assert shares == {"pass@none", "not_retrieved@retrieval", "cut_by_rerank@reranking"}
    assert page.locator("#chart-canary-verdicts circle.pt").count() == 2 * len(shares)
    cut = page.locator("#chart-canary-verdicts-reranking circle.pt title")
    assert [t.split(": ")[-1] for t in cut.evaluate_all("ts => ts.map(t => t.textContent)")] == [
        "0.0% (n=6)",
        "33.3% (n=6)",
    ]
    assert page.locator("#chart-canary-verdicts-reranking path.alert-mark").count() == 1
    assert page.locator("#alerts tbody tr").count() == 2


def test_clicking_a_traffic_point_opens_that_window_s_traces(dashboard, filled, opened):
    page = opened(dashboard.url).page
    page.locator("#chart-traffic-all-Traces circle.pt").nth(2).click()
    page.wait_for_load_state("load")
    url = urllib.parse.urlsplit(page.url)
    assert url.path == "/window"
    assert urllib.parse.parse_qs(url.query)["start"] == [str(window_at(2))]
    cards = page.locator(".case.trace")
    queries = [q.split(" ")[0] for q in filled["queries"][2]]
    assert cards.count() == len(queries)
    shown = page.locator(".case.trace h3").all_inner_texts()
    assert sorted(s.split(" ")[0] for s in shown) == sorted(queries)
    failed = page.locator(".case.trace", has_text="Is the vector store up?")
    assert "vector store did not answer" in failed.inner_text()  # the error, with its stage
    assert "error" in failed.locator(".badge").all_inner_texts()
    first = cards.first  # the context's chunk texts, the answer and the latency are there
    assert first.locator("details[open] .chunk").count() >= 1
    assert "Answer:" in first.inner_text() and "retrieval" in first.inner_text()


def test_a_point_of_a_signal_opens_its_window_worst_traces_first(dashboard, opened):
    page = opened(dashboard.url).page
    points = page.locator("#chart-traffic-reranking-Top1Dropped circle.pt")
    assert points.count() == len(TRAFFIC_WINDOWS)
    points.last.click()  # window 5: the reranker dropped the first chunk for two traces of three
    page.wait_for_load_state("load")
    assert (
        page.locator("#signals p")
        .first.inner_text()
        .startswith("reranking · Top1Dropped: 66.7% over 3 trace(s)")
    )  # the value clicked, then the traces
    assert page.locator("#signals tr.hl").count() == 1  # and its row in the window's table
    badges = page.locator(".case.trace .badge.value").all_inner_texts()
    assert badges == ["Top1Dropped 1", "Top1Dropped 1", "Top1Dropped 0"]
    assert page.locator(".case.trace").first.locator(".badge", has_text="top1-dropped").count() == 1


def test_clicking_a_canary_point_opens_the_round_s_cases(dashboard, filled, opened):
    page = opened(dashboard.url).page
    cut = page.locator("#chart-canary-verdicts-reranking circle.pt")
    cut.last.click()  # the second round: the reranker dropped the evidence
    page.wait_for_load_state("load")
    params = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
    assert params == {
        "id": [filled["rounds"][1]],
        "verdict": ["cut_by_rerank"],
        "stage": ["reranking"],
    }
    cases = page.locator("#cases .case")
    assert cases.count() == 2  # q1 and q5 kept the wrong chunk (q3 was never retrieved)
    assert all(
        v == "cut_by_rerank at reranking"
        for v in page.locator("#cases .case .verdict").all_inner_texts()
    )
    first = cases.first
    text = first.inner_text()
    assert "When was the Eiffel Tower finished?" in text  # the query
    assert "not in the context" in text  # the evidence
    assert "Paris is the capital of France." in text  # the context the generator saw
    assert "From the context: Paris" in text  # the answer
    first.locator("details summary", has_text="Pool").click()
    assert first.locator("details:not([open]) .chunk").count() == 0
    assert "The Eiffel Tower was finished in 1889" in first.inner_text()  # the pool held it
    page.locator(".filters a", has_text="not_retrieved").click()
    page.wait_for_load_state("load")
    assert page.locator("#cases .case h3").all_inner_texts() == ["q3 not_retrieved at retrieval"]


def test_markup_in_trace_text_runs_nothing_and_shows_as_text(dashboard, filled, opened):
    views = [
        opened(dashboard.url),
        opened(f"{dashboard.url}window?origin=traffic&start={window_at(INJECTED_WINDOW)}"),
        opened(f"{dashboard.url}round?id={filled['rounds'][0]}"),
        opened(f"{dashboard.url}trace?id={'e' * 32}"),
    ]
    for view in views:
        page = view.page
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        page.wait_for_timeout(100)
        assert view.dialogs == [] and view.errors == []
        assert page.locator("img").count() == 0 and page.locator("script").count() == 0
        assert page.locator("main b", has_text="up").count() == 0  # the alert's <b> is text
    overview, window, round_, trace = (v.page.locator("main").inner_text() for v in views)
    assert ALERT_MESSAGE in overview and IMG in overview  # the alert's message and example
    for text in (window, trace):
        assert f"Who built it? {IMG}" in text  # the query
        assert f"Gustave Eiffel's company built it. {SCRIPT}" in text  # a chunk
        assert f"Eiffel's company {IMG} built it." in text  # the answer
    assert SCRIPT in round_  # a canary chunk


# --- access ------------------------------------------------------------------------------------------


def test_a_token_is_required_when_one_is_set(filled):
    with serving(filled["location"], token=TOKEN) as dashboard:
        for path in (
            "/",
            f"/window?origin=traffic&start={BASE}",
            "/static/dashboard.css",
            f"/round?id={filled['rounds'][0]}",
            "/nowhere",
        ):
            for headers in (
                {},
                {"Authorization": "Bearer wrong"},
                {"Authorization": f"Bearer {TOKEN}x"},
                {"Authorization": TOKEN},
                {"Cookie": f"{dashboard.cookie_name}={TOKEN}"},
            ):
                status, _, body = request(dashboard, "GET", path, headers)
                assert status == 401, (path, headers)
                assert TOKEN not in body.decode()
        assert request(dashboard, "GET", "/?token=wrong")[0] == 401
        status, _, body = request(dashboard, "GET", "/", {"Authorization": f"Bearer {TOKEN}"})
        assert status == 200 and b"Alert history" in body
        # the token once in the URL: a cookie (not the token) and the same page without it
        status, headers, _ = request(
            dashboard, "GET", f"/window?origin=traffic&token={TOKEN}&start={BASE}"
        )
        assert status == 303
        assert headers["Location"] == f"/window?origin=traffic&start={BASE}"
        cookie = headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN not in cookie
        status, _, body = request(
            dashboard, "GET", headers["Location"], {"Cookie": cookie.split(";")[0]}
        )
        assert status == 200 and b"Traces" in body


def test_a_browser_gives_the_token_once(filled, browser, opened):
    with serving(filled["location"], token=TOKEN) as dashboard:
        assert opened(dashboard.url).response.status == 401
        view = opened(f"{dashboard.url}?token={TOKEN}")
        page = view.page
        assert view.response.status == 200 and page.url == dashboard.url  # the token left the URL
        (cookie,) = view.context.cookies()
        assert (
            cookie["httpOnly"] and cookie["sameSite"] == "Strict" and TOKEN not in cookie["value"]
        )
        assert page.evaluate("document.cookie") == ""  # no script could read it
        assert view.errors == []
        page.locator("#chart-traffic-all-Traces circle.pt").first.click()  # still signed in
        page.wait_for_load_state("load")
        assert urllib.parse.urlsplit(page.url).path == "/window"
        assert page.locator(".case.trace").count() == TRAFFIC_WINDOWS[0]
        assert all(TOKEN not in u for u in view.requests[1:])  # only the first request had it


def test_listening_beyond_loopback_needs_a_token(filled, tmp_path):
    missing = tmp_path / "never-made.db"
    for host in ("0.0.0.0", "192.0.2.10", "::", "example.org"):
        with pytest.raises(ValueError, match="needs a token"):
            Dashboard(filled["location"], host=host, port=0)
        with pytest.raises(ValueError, match="needs a token"):  # refused before the store
            Dashboard(str(missing), host=host, port=0)
    assert not missing.exists()
    outside = Dashboard(filled["location"], host="0.0.0.0", port=0, token=TOKEN)
    outside.shutdown()
    for host in ("127.0.0.1", "localhost", "::1"):
        Dashboard(filled["location"], host=host, port=0).shutdown()


def test_a_request_naming_another_host_is_refused_without_a_token(dashboard):
    """DNS rebinding: a page of evil.example resolved to 127.0.0.1 must not read the store."""
    for host in ("evil.example", "evil.example:8765", "192.0.2.1"):
        assert request(dashboard, "GET", "/", {"Host": host})[0] == 403, host
    for host in (
        f"127.0.0.1:{dashboard.port}",
        f"localhost:{dashboard.port}",
        f"[::1]:{dashboard.port}",
    ):
        assert request(dashboard, "GET", "/", {"Host": host})[0] == 200, host


def test_only_get_and_head_are_answered(dashboard):
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PROPFIND"):
        status, headers, _ = request(dashboard, method, "/", body=b"{}")
        assert status == 405, method
        assert headers["Allow"] == "GET, HEAD"
    status, headers, body = request(dashboard, "HEAD", "/")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 1000
    assert headers["Content-Security-Policy"] == CSP


def test_bad_parameters_are_400_and_unknown_pages_404(dashboard):
    for path in (
        "/window",
        "/window?start=abc",
        "/window?start=-5",
        "/?range=2w",
        f"/window?start={BASE}&only=nonsense",
        "/round",
        "/trace",
    ):
        assert request(dashboard, "GET", path)[0] == 400, path
    for path in ("/round?id=nope", "/trace?id=nope", "/admin", "/static/other.css"):
        assert request(dashboard, "GET", path)[0] == 404, path


def test_the_token_never_appears_in_what_the_dashboard_prints_or_answers(filled, capfd):
    answers = []
    with serving(filled["location"], token=TOKEN) as dashboard:
        tries = [
            ("GET", f"/?token={TOKEN}", {}),
            ("GET", f"/?token={TOKEN}-no", {}),
            ("GET", "/", {"Authorization": f"Bearer {TOKEN}"}),
            ("GET", "/", {"Authorization": f"Bearer {TOKEN}!"}),
            ("GET", f"/nowhere?token={TOKEN}", {}),
            ("GET", f"/window?start=x&token={TOKEN}", {}),
            ("POST", f"/?token={TOKEN}", {"Authorization": f"Bearer {TOKEN}"}),
            ("GET", "/window?start=x", {"Authorization": f"Bearer {TOKEN}"}),
        ]
        for method, path, headers in tries:
            _, got, body = request(dashboard, method, path, headers)
            answers.append(json.dumps(got) + body.decode())
        for line in (
            f"GET /?token={TOKEN} extra HTTP/1.1",
            f"GET /?token={TOKEN} BAD/9.9",
            f"GET /?token={TOKEN} HTTP/1.1\r\nX: {'y' * 70000}",
        ):  # malformed requests
            with socket.create_connection(("127.0.0.1", dashboard.port), timeout=10) as raw:
                raw.sendall(f"{line}\r\n\r\n".encode())
                answer = raw.recv(65536).decode(errors="replace")
            assert "400" in answer or "431" in answer, answer  # refused, and said why
            answers.append(answer)
        print(f"dashboard at {dashboard.url}")
    printed = capfd.readouterr()
    assert "dashboard at http://127.0.0.1:" in printed.out  # output is captured here
    assert all(TOKEN not in a for a in answers)
    assert TOKEN not in printed.out + printed.err


# --- reading, never writing ------------------------------------------------------------------------


def test_the_dashboard_never_writes_the_store(store_location, tmp_path, postgres_server):
    with MonitorStore(store_location, window_seconds=WINDOW_S) as store:
        traffic(store, {0: 2, 1: 2})
        refresh_windows(store)
        traffic(store, {2: 3})  # stored, its window not computed yet (the collector's job)
        before = store.counts()
        trace_id = store.traces.started_in(window_at(2), window_at(3))[0].trace_id
        dirty = store.db.execute("SELECT origin, start_ns FROM dirty_windows")
    assert dirty == [("traffic", window_at(2))]
    with serving(store_location) as dashboard:
        status, _, body = request(dashboard, "GET", "/")
        assert status == 200 and b"1 (the collector computes them" in body
        for path in (f"/window?origin=traffic&start={window_at(2)}", f"/trace?id={trace_id}"):
            assert request(dashboard, "GET", path)[0] == 200
    with MonitorStore(store_location) as store:
        assert store.counts() == before
        assert store.db.execute("SELECT origin, start_ns FROM dirty_windows") == dirty
        assert store.windows.series(since_ns=window_at(2)) == []  # it was not computed
    reader = open_read_only(store_location)
    try:  # nothing can write through the dashboard's connection
        with pytest.raises(Exception, match=r"(?i)read.only|readonly"):
            reader.db.execute("DELETE FROM dirty_windows")
    finally:
        reader.close()
    # a store that is not there is refused, not made
    missing = tmp_path / "missing.db"
    with pytest.raises(StoreError, match="no monitoring store"):
        Dashboard(str(missing), port=0)
    assert not missing.exists()
    empty = _new_postgres_database(postgres_server)
    with pytest.raises(StoreError, match="not a cofe monitoring store"):
        Dashboard(empty, port=0)
    import psycopg

    with psycopg.connect(empty) as conn:  # no table was created in it
        assert conn.execute(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone() == (0,)


def test_pages_show_what_a_writer_commits_meanwhile(store_location, opened):
    with MonitorStore(store_location, window_seconds=WINDOW_S) as writer:
        traffic(writer, {0: 2, 1: 2})
        refresh_windows(writer)
        with serving(store_location) as dashboard:
            page = opened(dashboard.url).page
            points = page.locator("#chart-traffic-all-Traces circle.pt")
            assert points.count() == 2
            stop = threading.Event()

            def write() -> None:  # a collector storing batches while pages are read
                w = 2
                while not stop.is_set() and w < 12:
                    traffic(writer, {w: 2})
                    refresh_windows(writer)
                    w += 1

            thread = threading.Thread(target=write)
            thread.start()
            try:
                for _ in range(5):
                    assert request(dashboard, "GET", "/")[0] == 200
            finally:
                stop.set()
                thread.join()
            windows = len(writer.windows.series(signal="Traces", stage="all"))
            page.reload()
            assert points.count() == windows > 2


def test_a_busy_window_reads_only_its_first_traces(dashboard, filled, monkeypatch):
    from cofe.monitor.web import _drilldown

    start = window_at(2)
    everything = len(filled["queries"][2])
    assert everything > 2
    monkeypatch.setattr(_drilldown, "MAX_TRACES", 2)
    status, _, body = request(dashboard, "GET", f"/window?origin=traffic&start={start}")
    assert status == 200 and "the first 2" in body.decode()
    assert body.decode().count("class='case trace") == 2
