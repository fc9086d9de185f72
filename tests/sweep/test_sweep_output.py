"""What `cofe sweep` prints: the answer first, pipeline order, no best among ties (issue 44,
friction 5)."""

from __future__ import annotations

from cofe.cli._sweep import render_sweep
from cofe.sweep import Cell, SweepResult, rank_cells
from tests.compare.test_compare_output import scoring


def sweep(results, alpha=0.05):
    from cofe.compare import inference_for
    from cofe.sweep._sweep import sweep_small_sample

    means, best = rank_cells(results, resamples=199)
    inference = inference_for(results)
    cells = [Cell(name, {}) for name in results]
    return SweepResult(
        cells,
        results,
        best,
        means,
        alpha,
        small_sample=sweep_small_sample(best, alpha, clustered=inference.clustered),
        caveat=inference.caveat,
    )


def test_rows_in_pipeline_order_ties_named_as_ties_and_the_answer_first():
    n = 120
    cols = {
        ("answer", "RougeL"): [0.5] * n,
        ("pool", "KeywordRecall@30"): [1.0] * n,
        ("corpus", "ChunkIntegrity"): [0.9] * n,
    }
    worse = {**cols, ("pool", "KeywordRecall@30"): [0.0] * n}
    result = sweep({"k=1": scoring(worse, 60), "k=2": scoring(cols, 60)})
    printed = render_sweep(result)
    lines = printed.splitlines()
    assert lines[0] == (
        "k=2 is best at retrieval: pool/KeywordRecall@30 +1.000 over k=1 "
        "[95 % CI +1.000, +1.000]; no cell stands out anywhere else"
    )
    rows = [line.split()[0] for line in lines if "/" in line.split(" ")[0]]
    assert rows == ["corpus/ChunkIntegrity", "pool/KeywordRecall@30", "answer/RougeL"]
    rouge = next(line for line in lines if line.startswith("answer/RougeL"))
    assert "tie: k=1, k=2" in rouge and rouge.split()[-1] == "no"
    best = result.best.set_index("measure")
    assert best.loc["RougeL", "best"] == "" and not best.loc["RougeL", "significant"]
    assert result.small_sample == ""


def test_a_small_sweep_says_no_cell_can_be_significantly_best():
    a = scoring({("pool", "KeywordRecall@30"): [0.0] * 4}, 2)
    b = scoring({("pool", "KeywordRecall@30"): [1.0] * 4}, 2)
    lines = render_sweep(sweep({"a": a, "b": b})).splitlines()
    assert lines[0] == "no cell is significantly better than the runner-up at any stage"
    assert "the paired tests had 4 questions" in lines[1]
    assert lines[2].startswith("Caveat: the result holds for these 2 document(s)")


def test_a_sweep_over_few_documents_tests_questions_and_says_so():
    a = scoring({("pool", "KeywordRecall@30"): [0.0] * 8}, 4)
    b = scoring({("pool", "KeywordRecall@30"): [1.0] * 8}, 4)
    lines = render_sweep(sweep({"a": a, "b": b})).splitlines()
    assert lines[0].startswith("b is best at retrieval")  # 8 questions: p = 2 / 2^8
    assert lines[1].startswith("Caveat: the result holds for these 4 document(s)")


def test_a_sweep_says_what_each_cell_is_doing_and_how_long_the_rest_should_take(tmp_path):
    """Issue 44, friction 1: a sweep printed 4 lines in 9 minutes."""
    from cofe import Chunk
    from cofe.adapters import PythonPipeline
    from cofe.sweep import run_sweep
    from tests.adapters._framework_apps import write_samples

    def factory(depth: int):
        chunks = [Chunk(chunk_id=f"c{i}", doc_id="d", text=f"Filler {i}.") for i in range(3)]
        return PythonPipeline(
            chunks=chunks,
            retrieve=lambda query: [c.chunk_id for c in chunks][:depth],
            generate=lambda query, context: "At dawn.",
        )

    lines: list[str] = []
    evalset = write_samples(tmp_path / "evalset.jsonl", 3)
    run_sweep(
        {"depth": [1, 2, 3]}, evalset, tmp_path / "s", factory=factory, log=lines.append,
        resamples=99,
    )  # fmt: skip
    assert lines[0] == "[1/3] depth=1: building the pipeline"
    assert "[1/3] depth=1: answering the eval set" in lines
    assert "[1/3] depth=1: scoring" in lines
    assert any(line.startswith("[1/3] depth=1: done in ") for line in lines)
    third = next(line for line in lines if line.startswith("[3/3] depth=3: building"))
    assert third.endswith("left for 1 cell(s))") and "(about " in third
