"""Issue 29, item 2: a canary measure whose cutoff changed (top-k 4, then 1) stays one series
per stage and step on the dashboard -- the regression shows as a drop of one line, the cutoff
on each point -- instead of two one-point series and no overview point for the new round."""

from __future__ import annotations

import re
from pathlib import Path

from cofe import Chunk, EvalSample
from cofe.adapters import PythonPipeline
from cofe.evalset import write_evalset
from cofe.monitor import MonitorStore, run_canary
from cofe.monitor.analysis._canary import series_of
from cofe.monitor.web._dashboard import Pages, _Params

FACTS = {"Paris": "1889", "Berlin": "1961", "Rome": "753", "Vienna": "1365"}
T0 = 1_700_000_000 * 10**9


def _rounds(tmp_path: Path, store: MonitorStore, top_ks: list[int], pools: list[int]) -> None:
    chunks = [
        Chunk(chunk_id=f"f{i}", doc_id="d", text=f"Filler sentence number {i}.") for i in range(4)
    ]
    chunks += [
        Chunk(chunk_id=city, doc_id="d", text=f"{city} dates from {year}.")
        for city, year in FACTS.items()
    ]
    samples = [
        EvalSample(
            id=city,
            query=f"When does {city} date from?",
            coarse_keywords=[city],
            fine_keywords=[[year]],
        )
        for city, year in FACTS.items()
    ]
    evalset = tmp_path / "canary.jsonl"
    write_evalset(evalset, samples)
    state = {"k": top_ks[0], "pool": pools[0]}
    for i, (k, pool) in enumerate(zip(top_ks, pools, strict=True)):
        state["k"], state["pool"] = k, pool
        pipeline = PythonPipeline(
            chunks=chunks,
            retrieve=lambda q: ["f0", "f1", q.split()[2], "f2", "f3"][: state["pool"]],  # 3rd
            rerank=lambda q, candidates: candidates[: state["k"]],
            generate=lambda q, ctx: "I do not know.",
            top_k=k,
        )
        clock = iter([T0 + i * 3600 * 10**9, T0 + i * 3600 * 10**9 + 10**9])
        run_canary(store, evalset, tmp_path / "rounds", pipeline=pipeline, now_ns=clock.__next__)


def _figure(page: str, chart_id: str) -> str:
    match = re.search(rf"<figure[^>]*id='{re.escape(chart_id)}'>(.*?)</figure>", page, re.S)
    assert match, f"no chart {chart_id}"
    return match[1]


def _tips(svg: str) -> list[str]:
    return re.findall(r'<circle class="pt"[^>]*><title>([^<]*)</title>', svg)


def test_a_new_top_k_continues_its_series_with_the_cutoff_on_the_point(tmp_path: Path) -> None:
    with MonitorStore(tmp_path / "m.db") as store:
        _rounds(tmp_path, store, top_ks=[4, 1], pools=[5, 4])  # a new retriever and top-k
        rows = series_of(store.canaries.series())
        page = Pages(store).overview(_Params("range=all"))
    context = [r for r in rows if r["step"] == "context" and r["series"] == "KeywordRecall"]
    assert [(r["measure"], r["cutoff"], r["value"]) for r in context] == [
        ("KeywordRecall@4", 4, 1.0),
        ("KeywordRecall@1", 1, 0.0),
    ]
    pool = {
        (r["series"], r["measure"])
        for r in rows
        if r["step"] == "pool" and r["measure"].startswith("KeywordRecall@")
    }
    assert pool == {
        ("KeywordRecall", "KeywordRecall@5"),
        ("KeywordRecall", "KeywordRecall@4"),
        ("KeywordRecall (top-k)", "KeywordRecall@4"),
        ("KeywordRecall (top-k)", "KeywordRecall@1"),
    }
    # the overview: a point of every step in both rounds; the context's two points are one line
    overview = _figure(page, "chart-canary-recall")
    tips = _tips(overview)
    assert [t.split(" ·")[0] for t in tips if " at pool" in t] == [
        "KeywordRecall@5 at pool",
        "KeywordRecall@4 at pool",
    ]
    assert [t.split(" ·")[0] for t in tips if " at context" in t] == [
        "KeywordRecall@4 at context",
        "KeywordRecall@1 at context",
    ]
    # the stage's chart of the measure at the context: one series, its drop a joined line
    stage = _figure(page, "chart-canary-reranking-context-KeywordRecall")
    assert len(_tips(stage)) == 2 and stage.count('<polyline class="series"') == 1
    assert "KeywordRecall@4" in stage and "KeywordRecall@1" in stage  # each point's cutoff
    pool_chart = _figure(page, "chart-canary-retrieval-pool-KeywordRecall")
    assert pool_chart.count('<polyline class="series"') == 2  # the pool's and its top-k's
