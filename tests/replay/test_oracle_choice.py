"""Which chunk the oracle hands on: the gold passage's holder before a look-alike the run
happened to retrieve (a chunk elsewhere sharing the point's words is not the evidence)."""

from __future__ import annotations

from pathlib import Path

from cofe import Chunk, EvalSample, Manifest, ParsedDocument, RankedChunk, RunWriter, SampleRecord
from cofe.evalset import SourceRef, write_evalset
from cofe.replay import find_oracles
from cofe.runlog import read_run
from cofe.stages import ScoreConfig

GOLD = "Kenya became independent in 1963. Its first president was Jomo Kenyatta."
OTHER = "In 1963 the Kenya football team played its first match abroad."
TEXTS = {"story": GOLD, "sport": OTHER}


def _run(folder: Path, source: SourceRef) -> tuple[Path, EvalSample]:
    sample = EvalSample(
        id="q",
        query="When did Kenya become independent?",
        coarse_keywords=["Kenya"],
        fine_keywords=[["1963"]],
        reference_answer="1963",
        source=source,
    )
    write_evalset(folder.parent / "evalset.jsonl", [sample])
    writer = RunWriter(folder)
    writer.start(
        Manifest(run_id="r", top_k=1, stages=["chunking", "retrieval", "generation"]),
        folder.parent / "evalset.jsonl",
    )
    writer.add_documents(
        [ParsedDocument(doc_id=d, source=f"{d}.txt", text=t) for d, t in TEXTS.items()]
    )
    cut = GOLD.index("Its")
    writer.add_chunks(
        [
            Chunk(chunk_id="story#0", doc_id="story", text=GOLD[:cut], start=0, end=cut),
            Chunk(chunk_id="story#1", doc_id="story", text=GOLD[cut:], start=cut, end=len(GOLD)),
            Chunk(chunk_id="sport#0", doc_id="sport", text=OTHER, start=0, end=len(OTHER)),
        ]
    )
    # the run retrieved the look-alike (at rank 2, below the cutoff) and the gold passage's
    # second half, which does not hold the point
    writer.add_samples(
        [
            SampleRecord(
                sample_id="q",
                pool=[RankedChunk(chunk_id="story#1"), RankedChunk(chunk_id="sport#0")],
                answer="Jomo Kenyatta",
            )
        ]
    )
    return folder, sample


def test_the_gold_passage_holder_is_chosen_over_a_look_alike_in_the_pool(tmp_path: Path) -> None:
    run, sample = _run(tmp_path / "run", SourceRef(doc="story.txt", start=0, end=len(GOLD)))
    found = find_oracles(read_run(run), [sample], {"q": [0]}, ScoreConfig(), 1)["q"]
    assert [c.chunk_id for c in found.chunks] == ["story#0"]
    assert not found.in_pool  # a perfect retriever would have had to fetch it


def test_without_a_placed_source_span_the_least_intrusive_holder_is_kept(tmp_path: Path) -> None:
    # the sample names its document but no offsets: nothing marks the gold passage, so the
    # holder the run already retrieved is the one handed on
    run, sample = _run(tmp_path / "run", SourceRef(doc="story.txt"))
    found = find_oracles(read_run(run), [sample], {"q": [0]}, ScoreConfig(), 1)["q"]
    assert [c.chunk_id for c in found.chunks] == ["sport#0"]
    assert found.in_pool
