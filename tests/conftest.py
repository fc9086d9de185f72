"""Shared fixtures: build small run directories by hand."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from cofe import (
    Chunk,
    EvalSample,
    Manifest,
    ParsedDocument,
    RankedChunk,
    RunLog,
    RunWriter,
    SampleRecord,
    write_evalset,
)
from cofe.evalset import file_sha256

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_RUN = REPO / "examples" / "squad-bm25"


def ranked(*chunk_ids: str) -> list[RankedChunk]:
    return [
        RankedChunk(chunk_id=c, score=float(len(chunk_ids) - i)) for i, c in enumerate(chunk_ids)
    ]


MakeRun = Callable[..., Path]


@pytest.fixture
def make_run(tmp_path: Path) -> MakeRun:
    """``make_run(samples, chunks={id: text}, records=[...], docs={id: text})`` -> run dir.

    Chunks are given as ``{chunk_id: text}`` (doc "d1") or ``{chunk_id: (doc_id, text)}``.
    """
    counter = {"n": 0}

    def build(
        samples: Sequence[EvalSample],
        chunks: dict[str, str | tuple[str, str]],
        records: Sequence[SampleRecord],
        docs: dict[str, str] | None = None,
    ) -> Path:
        counter["n"] += 1
        root = tmp_path / f"run{counter['n']}"
        root.mkdir()
        evalset = root / "source-evalset.jsonl"
        write_evalset(evalset, samples)
        writer = RunWriter(root)
        writer.start(
            Manifest(run_id=f"test-{counter['n']}", evalset_sha256=file_sha256(evalset)), evalset
        )
        if docs:
            writer.add_documents(
                ParsedDocument(doc_id=d, source=f"{d}.txt", text=t) for d, t in docs.items()
            )
        writer.add_chunks(
            Chunk(chunk_id=c, doc_id=v[0], text=v[1])
            if isinstance(v, tuple)
            else Chunk(chunk_id=c, doc_id="d1", text=v)
            for c, v in chunks.items()
        )
        writer.add_samples(records)
        return root

    return build


def memory_run(
    chunks: dict[str, str | tuple[str, str]],
    records: Sequence[SampleRecord],
    docs: dict[str, str] | None = None,
) -> RunLog:
    """The same as a run directory, in memory (for fast property tests)."""
    return RunLog(
        path=Path("memory"),
        manifest=Manifest(run_id="memory"),
        documents={
            d: ParsedDocument(doc_id=d, source=f"{d}.txt", text=t) for d, t in (docs or {}).items()
        },
        chunks={
            c: Chunk(chunk_id=c, doc_id=v[0], text=v[1])
            if isinstance(v, tuple)
            else Chunk(chunk_id=c, doc_id="d1", text=v)
            for c, v in chunks.items()
        },
        records={r.sample_id: r for r in records},
    )


def recall_at(result, stage: str, measure: str, sample_id: str = "q") -> float:
    rows = result.scores[
        (result.scores.sample_id == sample_id)
        & (result.scores.stage == stage)
        & (result.scores.measure == measure)
    ]
    assert len(rows) == 1, (
        f"{stage}/{measure} not scored for {sample_id}: {result.skipped.to_dict('records')}"
    )
    return float(rows.value.iloc[0])
