"""``cofe run`` and ``cofe demo`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cofe import read_run
from cofe.cli import main


def test_run_default_pipeline_records_and_scores(tmp_path, small_docs, small_evalset, capsys):
    out = tmp_path / "run"
    args = [
        "run",
        "--docs",
        str(small_docs),
        "--evalset",
        str(small_evalset),
        "--out",
        str(out),
        "--chunk-size",
        "32",
        "--chunk-overlap",
        "0",
        "--cache",
        str(tmp_path / "cache"),
    ]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "documents 3" in printed and "Loss waterfall" in printed
    run = read_run(out)
    assert run.manifest.pipeline["chunk_size"] == 32
    assert run.manifest.pipeline["generator"] == "extractive (not an LLM)"
    assert run.manifest.versions["llama-index-core"]
    summary = json.loads((out / "scores" / "summary.json").read_text())
    assert summary["samples"]["scored"] == 3
    # the same command again: everything recorded, nothing re-answered, scores unchanged
    assert main(args) == 0
    assert "3 already recorded, resumed" in capsys.readouterr().out
    assert len((out / "samples.jsonl").read_text().splitlines()) == 3


def test_second_run_with_other_top_k_reuses_parse_chunks_and_index(
    tmp_path, small_docs, small_evalset
):
    from cofe.pipeline import Cache, DefaultPipeline, PipelineConfig
    from cofe.runner import run_pipeline

    cache = Cache(tmp_path / "cache")
    for k, out in ((4, "a"), (2, "b")):
        run_pipeline(
            DefaultPipeline(PipelineConfig(chunk_size=32, chunk_overlap=0, top_k=k)),
            small_evalset,
            tmp_path / out,
            docs=small_docs,
            cache=cache,
            progress=False,
        )
        if k == 4:
            assert cache.hits == 0
    assert cache.hits == 3 + 1 + 1  # three parsed files, the chunk list, the BM25 index


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pipeline", "no_such_module:build"], "cannot import 'no_such_module'"),
        (["--pipeline", "nocolon"], "use 'default' or 'package.module:factory'"),
        (["--chunk-size", "8"], "chunk size must be at least 16"),
        (["--reranker", "magic"], "unknown reranker 'magic'"),
        (["--top-k", "40"], "exceeds the pool size"),
        (["--generator", "openai", "--model", "m"], "no endpoint"),
    ],
)
def test_bad_options_give_one_clear_line(
    tmp_path, small_docs, small_evalset, capsys, monkeypatch, args, message
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    code = main(
        [
            "run",
            "--docs",
            str(small_docs),
            "--evalset",
            str(small_evalset),
            "--out",
            str(tmp_path / "run"),
            *args,
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_run_with_an_openai_endpoint_generator(tmp_path, small_docs, small_evalset, capsys):
    from cofe.testing import ScriptedOpenAI

    with ScriptedOpenAI(lambda messages, request: "The tower was finished in 1889.") as server:
        code = main(
            [
                "run",
                "--docs",
                str(small_docs),
                "--evalset",
                str(small_evalset),
                "--out",
                str(tmp_path / "run"),
                "--generator",
                "openai",
                "--base-url",
                server.base_url,
                "--model",
                "local",
                "--chunk-size",
                "32",
                "--chunk-overlap",
                "0",
                "--cache",
                "none",
            ]
        )
        assert code == 0 and len(server.requests) == 3
        base_url = server.base_url
    run = read_run(tmp_path / "run")
    assert run.manifest.pipeline["generator"] == "openai"
    assert run.manifest.pipeline["base_url"] == base_url
    assert "api_key" not in json.dumps(run.manifest.pipeline)
    assert run.records["q1"].answer == "The tower was finished in 1889."


@pytest.mark.slow
def test_demo_runs_both_chunk_sizes_and_prints_them_side_by_side(tmp_path: Path, capsys) -> None:
    from cofe.demo import DemoConfig, run_demo

    config = DemoConfig(
        chunk_sizes=(128, 512), squad_per_article=2, cmrc_articles=5, squad_articles=4
    )
    outcomes = run_demo(tmp_path / "demo", config, progress=False)
    printed = capsys.readouterr().out
    assert set(outcomes) == {"chunk128", "chunk512"}
    evalset_lines = (tmp_path / "demo" / "evalset.jsonl").read_text().splitlines()
    for name, (report, result) in outcomes.items():
        assert report.samples == len(evalset_lines) == len(result.verdicts)
        assert (tmp_path / "demo" / name / "scores" / "summary.json").exists()
    assert "chunk128  chunk512" in printed and "Verdicts" in printed
    assert "EXTRACTIVE (not an LLM)" in printed
    # the demo ends with the comparison of its two runs, written for programs too
    assert "Is the difference real?" in printed
    saved = json.loads((tmp_path / "demo" / "comparison" / "comparison.json").read_text())
    assert saved["runs"] == ["chunk128", "chunk512"] and saved["differences"]
    page = (tmp_path / "demo" / "report.html").read_text()
    assert "Bad cases" in page and "<svg" in page and "chunk512" in page
    docs = {p.suffix for p in (tmp_path / "demo" / "docs").iterdir()}
    assert docs == {".html", ".md", ".txt"}
    # bigger chunks split fewer answers
    splits = {
        n: int((r.verdicts["verdict"] == "chunk_split").sum()) for n, (_, r) in outcomes.items()
    }
    assert splits["chunk512"] <= splits["chunk128"]


@pytest.mark.parametrize("reranker", ["minilm", "llm"])
def test_hybrid_retrieval_with_a_reranker_records_pool_and_context(
    tmp_path, small_docs, small_evalset, reranker
) -> None:
    from cofe.testing import ScriptedOpenAI

    with ScriptedOpenAI(lambda messages, request: '{"ranking": [2, 1]}') as server:
        code = main(
            [
                "run",
                "--docs",
                str(small_docs),
                "--evalset",
                str(small_evalset),
                "--out",
                str(tmp_path / "run"),
                "--retriever",
                "hybrid",
                "--reranker",
                reranker,
                "--top-k",
                "2",
                "--candidates",
                "5",
                "--chunk-size",
                "16",
                "--chunk-overlap",
                "0",
                "--base-url",
                server.base_url,
                "--model",
                "m",
                "--cache",
                "none",
            ]
        )
        calls = len(server.requests)
    assert code == 0
    run = read_run(tmp_path / "run")
    assert run.manifest.pipeline["reranker"] == reranker
    for record in run.records.values():
        assert record.error is None and len(record.context) == 2 and len(record.pool) >= 2
        if reranker == "llm":  # the model's order: the pool's second chunk first
            assert [c.chunk_id for c in record.context] == [p.chunk_id for p in record.pool[1::-1]]
    assert calls == (3 if reranker == "llm" else 0)
