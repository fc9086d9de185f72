"""`cofe sweep`: every cell run and scored, resumable, the best cell per measure tested."""

from __future__ import annotations

import json

import pytest

from cofe import Chunk
from cofe._cache import Cache
from cofe.adapters import PythonPipeline
from cofe.cli import main
from cofe.demo import DemoConfig
from cofe.demo._demo import build_demo_inputs
from cofe.sweep import grid_cells, run_sweep


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    work = tmp_path_factory.mktemp("sweep-inputs")
    config = DemoConfig(squad_per_article=3, cmrc_articles=6, squad_articles=3)
    docs, evalset, _ = build_demo_inputs(work, config)
    return docs, evalset, Cache(work / "cache")


def test_grid_cells_are_every_combination_named_by_their_parameters():
    cells = grid_cells({"chunk_size": [128, 512], "retriever": ["bm25", "dense"]})
    assert [c.name for c in cells] == [
        "chunk_size=128,retriever=bm25",
        "chunk_size=128,retriever=dense",
        "chunk_size=512,retriever=bm25",
        "chunk_size=512,retriever=dense",
    ]
    assert cells[3].params == {"chunk_size": 512, "retriever": "dense"}
    with pytest.raises(ValueError, match="no value"):
        grid_cells({"chunk_size": []})


@pytest.mark.slow
def test_a_sweep_runs_scores_and_ranks_every_cell_and_resumes(inputs, tmp_path):
    docs, evalset, cache = inputs
    grid = {"chunk_size": [64, 512]}
    result = run_sweep(
        grid, evalset, tmp_path / "s", docs=docs, cache=cache, log=lambda _: None, resamples=199
    )
    assert set(result.results) == {"chunk_size=64", "chunk_size=512"}
    best = result.best.set_index(["step", "measure"])
    row = best.loc[("context", "KeywordRecall@4")]
    assert {row["best"], row["runner_up"]} == {"chunk_size=64", "chunk_size=512"}
    means = result.means.set_index(["cell", "step", "measure"])["mean"]
    assert row["best_mean"] == max(means[(c, "context", "KeywordRecall@4")] for c in result.results)
    assert row["p_holm"] >= row["p_value"]
    # run again: every cell is already answered, nothing is appended
    samples = {c: (tmp_path / "s" / c / "samples.jsonl").read_bytes() for c in result.results}
    run_sweep(
        grid, evalset, tmp_path / "s", docs=docs, cache=cache, log=lambda _: None, resamples=99
    )
    for cell, before in samples.items():
        assert (tmp_path / "s" / cell / "samples.jsonl").read_bytes() == before


def test_a_custom_pipeline_factory_gets_each_cells_parameters(inputs, tmp_path):
    _docs, evalset, _cache = inputs
    seen = []

    def factory(depth: int):
        seen.append(depth)
        chunks = [
            Chunk(chunk_id="c1", doc_id="d", text="Nothing useful here."),
            Chunk(chunk_id="c2", doc_id="d", text="Still nothing."),
        ]

        def retrieve(query):
            return [c.chunk_id for c in chunks][:depth]

        return PythonPipeline(chunks=chunks, retrieve=retrieve, generate=lambda q, c: "no idea")

    result = run_sweep(
        {"depth": [1, 2]},
        evalset,
        tmp_path / "c",
        factory=factory,
        log=lambda _: None,
        resamples=99,
    )
    assert seen == [1, 2] and set(result.results) == {"depth=1", "depth=2"}
    out = result.write(tmp_path / "c")
    saved = json.loads((out / "sweep.json").read_text())
    assert [c["params"] for c in saved["cells"]] == [{"depth": 1}, {"depth": 2}]


def test_cli_refuses_an_empty_grid(tmp_path, capsys):
    (tmp_path / "e.jsonl").write_text("")  # a missing file is refused before: by argparse
    code = main(["sweep", "--evalset", str(tmp_path / "e.jsonl"), "--out", str(tmp_path / "o")])
    assert code == 2 and "no grid" in capsys.readouterr().err


def test_naive_and_summarising_cells_side_by_side_with_answered_rows_and_refusals(inputs, tmp_path):
    """A cell that hands on lossy summaries and declines is a cell like any other: its
    derivation losses are verdicts, its refusals a rate, and the answer's measures are ranked
    over all samples and over answered ones."""
    _docs, evalset, _cache = inputs
    chunks = [Chunk(chunk_id=f"c{i}", doc_id="d", text=f"Filler {i}.") for i in range(3)]

    def factory(kind: str):
        def retrieve(query):
            if kind == "naive":
                return [c.chunk_id for c in chunks]
            return [{"text": "A summary.", "kind": "summary", "derived_from": ["c0", "c1"]}]

        def generate(query, context):  # the summarising cell declines every other question
            return "I don't know." if kind != "naive" and len(query) % 2 else "Paris, in 1900."

        return PythonPipeline(chunks=chunks, retrieve=retrieve, generate=generate)

    result = run_sweep(
        {"kind": ["naive", "summary"]},
        evalset,
        tmp_path / "k",
        factory=factory,
        log=lambda _: None,
        resamples=99,
    )
    summary = result.results["kind=summary"]
    declined = summary.verdicts.refusal.notna()
    assert 0 < declined.sum() < len(declined)
    assert result.results["kind=naive"].verdicts.refusal.isna().all()
    steps = set(result.best.step)
    assert {"answer", "answered"} <= set(result.means.step) and "answer" in steps
    saved = json.loads((result.write(tmp_path / "k") / "sweep.json").read_text())
    rates = {(r["run"], r["query_type"]): r["rate"] for r in saved["refusals"]}
    assert rates[("kind=summary", "all")] == pytest.approx(declined.mean())  # JSON: 10 digits
    assert rates[("kind=naive", "all")] == 0


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_cli_sweeps_a_factory_returning_a_callable_as_cofe_run_accepts_it(
    tmp_path, monkeypatch, capsys
):
    """Issue 44, defect 1: ``--pipeline my_rag:build --param take=1,3`` where ``build`` returns
    a LangChain app's ``invoke`` (docs/frameworks.md): each cell is recorded through its spans,
    as ``cofe run --pipeline`` records it, not refused with an AttributeError."""
    pytest.importorskip("langchain_core")
    pytest.importorskip("openinference.instrumentation.langchain")
    from tests.adapters._framework_apps import write_samples

    (tmp_path / "my_sweep_rag.py").write_text(  # a name no other test imports
        "from tests.adapters._framework_apps import lcel\n"
        "def build(take):\n    return lcel(take=take).fn\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    evalset = write_samples(tmp_path / "evalset.jsonl", 3)
    out = tmp_path / "sweep"
    args = ["--pipeline", "my_sweep_rag:build", "--param", "take=1,3", "--concurrency", "1"]
    code = main(["sweep", *args, "--evalset", str(evalset), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    for cell in ("take=1", "take=3"):
        manifest = json.loads((out / cell / "manifest.json").read_text())
        assert manifest["pipeline"]["callable"].endswith("RunnableSequence.invoke")
