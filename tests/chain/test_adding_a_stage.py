"""docs/DESIGN.md, "The chain", followed step by step: a newcomer adds a stage and its step.

The toy is a *compression* stage between reranking and generation: the pipeline hands the
generator a compressed context, recorded in each sample record's ``compressed`` field --
the chunk ids it kept, or its text. The walk-through edits a copy of ``cofe`` (three files,
no more: the declarations, the run-log record, the verdicts) and scores a run in a fresh
process importing that copy: the new step is judged, has its column in points.csv and its
row in the summary, and a point the context held but the compressor dropped is the
compression stage's loss. Nothing in the scorer, the results or ``diagnose`` is edited: if
they stop reading the chain's declarations, this test fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# (file, text to find, what it becomes): the edits the walk-through makes, in its order
DECLARATIONS = "cofe/chain/_declared.py"
RECORD = "cofe/runlog/_models.py"
VERDICTS = "cofe/diagnose/_verdict.py"


def edits(reads: str) -> list[tuple[str, str, str]]:
    """The walk-through's edits for a compressed context of chunk ids (``reads="ranked"``)
    or of text (``reads="text"``)."""
    column = ("compressed_rank", "rank") if reads == "ranked" else ("compressed", "flag")
    field_type = "list[RankedChunk]" if reads == "ranked" else "str"
    return [
        # 1. the stage and the step, in pipeline order
        (
            DECLARATIONS,
            '    RERANKING = "reranking"\n',
            '    RERANKING = "reranking"\n    COMPRESSION = "compression"\n',
        ),
        (
            DECLARATIONS,
            '    ANSWER = "answer"',
            '    COMPRESSED = "compressed"  # the compressed context the generator received\n'
            '    ANSWER = "answer"',
        ),
        # 2. their declarations: the stage's loss verdict; the step's pass verdict, headline
        # measure, what it holds (reads), the record field holding it, its per-point column
        (
            DECLARATIONS,
            '    StageSpec(Stage.GENERATION, "Generation"',
            '    StageSpec(Stage.COMPRESSION, "Compression", "compression_lost",\n'
            '              ("compression_lost",)),\n'
            '    StageSpec(Stage.GENERATION, "Generation"',
        ),
        (
            DECLARATIONS,
            "    StepSpec(Step.ANSWER,",
            '    StepSpec(Step.COMPRESSED, "Compressed context", Stage.COMPRESSION,\n'
            '             "pass_to_compressed", "KeywordRecall",\n'
            f'             reads="{reads}", field="compressed", columns=({column!r},)),\n'
            "    StepSpec(Step.ANSWER,",
        ),
        # 3. the run log records the step's output
        (
            RECORD,
            "    answer: str | None = None\n",
            f"    compressed: {field_type} | None = None\n    answer: str | None = None\n",
        ),
        # 4. the two verdicts, where the declarations order them
        (
            VERDICTS,
            '    CUT_BY_RERANK = "cut_by_rerank"\n',
            '    CUT_BY_RERANK = "cut_by_rerank"\n    COMPRESSION_LOST = "compression_lost"\n',
        ),
        (
            VERDICTS,
            "    PASS_TO_CONTEXT = (",
            '    PASS_TO_COMPRESSED = "pass_to_compressed"\n    PASS_TO_CONTEXT = (',
        ),
    ]


def copy_with_a_new_stage(root: Path, reads: str) -> set[str]:
    """A copy of ``cofe`` under ``root`` with the walk-through's edits; the files edited."""
    shutil.copytree(REPO / "cofe", root / "cofe", ignore=shutil.ignore_patterns("__pycache__"))
    edited: set[str] = set()
    for name, old, new in edits(reads):
        path = root / name
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{name}: the walk-through's anchor {old!r} moved"
        path.write_text(text.replace(old, new), encoding="utf-8")
        edited.add(name)
    return edited


# Run in a fresh process importing the edited copy: a run whose pipeline compresses its
# context, scored as `cofe score` scores it; prints what the test checks.
SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path

    import cofe
    from cofe import (
        Chunk, EvalSample, Manifest, ParsedDocument, RankedChunk, RunWriter, SampleRecord,
        write_evalset,
    )
    from cofe.stages import score_to_folder

    assert Path(cofe.__file__).resolve().is_relative_to(Path(sys.argv[1]).resolve()), cofe.__file__
    reads, folder = sys.argv[2], Path(sys.argv[3])

    CAPITAL = "Paris is the capital of France."
    TOWER = "The Eiffel Tower is 330 metres tall."
    CHEESE = "Brie is a soft cheese."

    def ranked(*ids):
        return [RankedChunk(chunk_id=c, score=float(len(ids) - i)) for i, c in enumerate(ids)]

    def compressed(*ids):
        texts = {"c1": CAPITAL, "c2": TOWER}
        return ranked(*ids) if reads == "ranked" else " ".join(texts[c] for c in ids)

    samples = [
        # the context holds the capital; the compressor keeps only the tower
        EvalSample(id="dropped", query="What is the capital of France?",
                   coarse_keywords=["France"], fine_keywords=[["Paris", "capital"]],
                   source={"doc": "d1"}),
        # every point reaches the answer
        EvalSample(id="kept", query="How tall is the Eiffel Tower?",
                   coarse_keywords=["Eiffel"], fine_keywords=[["Eiffel Tower", "330"]],
                   source={"doc": "d1"}),
    ]
    records = [
        SampleRecord(sample_id="dropped", pool=ranked("c1", "c2", "c3"),
                     context=ranked("c1", "c2"), compressed=compressed("c2"),
                     answer="I do not know; the tower is tall."),
        SampleRecord(sample_id="kept", pool=ranked("c2", "c1", "c3"),
                     context=ranked("c2", "c1"), compressed=compressed("c2"),
                     answer="The Eiffel Tower is 330 metres tall."),
    ]
    run = folder / "run"
    write_evalset(folder / "evalset.jsonl", samples)
    writer = RunWriter(run)
    writer.start(
        Manifest(run_id="compressing", top_k=2,
                 stages=["parse", "chunking", "retrieval", "reranking", "compression",
                         "generation"]),
        folder / "evalset.jsonl",
    )
    writer.add_documents([ParsedDocument(doc_id="d1", source="d1.txt",
                                         text=" ".join([CAPITAL, TOWER, CHEESE]))])
    writer.add_chunks([Chunk(chunk_id="c1", doc_id="d1", text=CAPITAL),
                       Chunk(chunk_id="c2", doc_id="d1", text=TOWER),
                       Chunk(chunk_id="c3", doc_id="d1", text=CHEESE)])
    writer.add_samples(records)
    summary, out = score_to_folder(run)
    from cofe.cli import main as cofe_cli  # the HTML report of the same scoring
    assert cofe_cli(["report", str(run), "-o", str(folder / "report.html")]) == 0
    report = (folder / "report.html").read_text(encoding="utf-8")
    import pandas as pd
    points = pd.read_csv(out / "points.csv")
    verdicts = pd.read_json(out / "verdicts.jsonl", lines=True)
    print(json.dumps({
        "columns": list(points.columns),
        "points": json.loads(points.to_json(orient="records")),
        "verdicts": json.loads(verdicts.to_json(orient="records")),
        "summary": json.loads((out / "summary.json").read_text()),
        "report_headers": [h for h in ("Compressed context (rank)", "Compressed context (found)")
                           if f"<th>{h}</th>" in report],
    }))
    """
)


@pytest.mark.parametrize("reads", ["ranked", "text"])
def test_a_new_stage_touches_three_files_and_is_scored(tmp_path: Path, reads: str) -> None:
    copy = tmp_path / "src"
    edited = copy_with_a_new_stage(copy, reads)
    assert len(edited) <= 3, f"adding a stage took {len(edited)} files: {sorted(edited)}"

    env = {**os.environ, "PYTHONPATH": str(copy)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(copy), reads, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])

    # the step's own column, between the context's and the answer's (the chain's order)
    column = "compressed_rank" if reads == "ranked" else "compressed"
    columns = out["columns"]
    assert columns.index("context_rank") < columns.index(column) < columns.index("answer")
    points = {p["sample_id"]: p for p in out["points"]}
    assert points["dropped"]["context_rank"] is not None  # the context held the point ...
    assert not points["dropped"][column]  # ... the compressed context did not
    assert points["dropped"]["lost_at"] == "compression"
    assert points["kept"][column]

    # the verdicts: the compressor's loss, with its evidence; the other sample passes
    verdicts = {v["sample_id"]: v for v in out["verdicts"]}
    assert verdicts["dropped"]["verdict"] == "compression_lost"
    assert verdicts["dropped"]["stage"] == "compression"
    explanation = verdicts["dropped"]["explanation"]
    assert "not in the compressed" in explanation and "the context held it" in explanation
    assert verdicts["kept"]["verdict"] == "pass"

    # the report's per-point table shows the new step's column, titled by its step
    title = "Compressed context (rank)" if reads == "ranked" else "Compressed context (found)"
    assert out["report_headers"] == [title]

    summary = out["summary"]
    assert summary["verdicts"]["overall"] == {"compression_lost": 1, "pass": 1}
    # the waterfall has the new step's row, in the chain's order, and its headline measure
    waterfall = summary["waterfall"]["overall"]
    steps = list(waterfall)
    assert steps.index("context") < steps.index("compressed") < steps.index("answer")
    assert waterfall["context"] == 1.0 and waterfall["compressed"] == 0.5
    measures = {(row["step"], row["measure"]): row["mean"] for row in summary["measures"]}
    assert measures[("compressed", "KeywordRecall")] == 0.5
    assert summary["shape"]["stages"] == [
        "parse", "chunking", "retrieval", "reranking", "compression", "generation"
    ]  # fmt: skip


def test_the_walk_through_is_in_the_design_map() -> None:
    design = (REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    section = design.split("## The chain", 1)[1].split("\n## ", 1)[0]
    assert "tests/chain/test_adding_a_stage.py" in section
    for name in (DECLARATIONS, RECORD, VERDICTS):  # the files it edits, named there
        assert f"`{name}`" in section
